#ifndef CLIBNOTIFY_SHIM_H
#define CLIBNOTIFY_SHIM_H
// libnotify (desktop notifications over D-Bus) and gdk-pixbuf (its image dependency, used to re-encode images
// that are over a Gateway's attachment limits). Macros and variadic calls Swift cannot import are wrapped here.
#include <libnotify/notify.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

typedef void (*clibnotify_closed_cb)(NotifyNotification *notification, gpointer user_data);

static inline gulong clibnotify_connect_closed(NotifyNotification *n, clibnotify_closed_cb cb, gpointer data) {
    return g_signal_connect(n, "closed", G_CALLBACK(cb), data);
}

static inline void clibnotify_set_bool_hint(NotifyNotification *n, const char *key, gboolean value) {
    notify_notification_set_hint(n, key, g_variant_new_boolean(value));
}

static inline void clibnotify_set_string_hint(NotifyNotification *n, const char *key, const char *value) {
    notify_notification_set_hint(n, key, g_variant_new_string(value));
}

/// The reason libnotify gives for a closed notification (1 expired, 2 dismissed, 3 closed by call, 4 undefined).
static inline gint clibnotify_closed_reason(NotifyNotification *n) {
    return notify_notification_get_closed_reason(n);
}

/// Saves as JPEG at `quality` (1-100) into a newly allocated buffer (free with g_free).
static inline gboolean clibnotify_save_jpeg(GdkPixbuf *pixbuf, int quality, gchar **buffer, gsize *size) {
    char q[8];
    g_snprintf(q, sizeof q, "%d", quality);
    char *keys[] = {"quality", NULL};
    char *values[] = {q, NULL};
    return gdk_pixbuf_save_to_bufferv(pixbuf, buffer, size, "jpeg", keys, values, NULL);
}

static inline void clibnotify_object_unref(gpointer object) { if (object) g_object_unref(object); }
static inline void clibnotify_pixbuf_unref(GdkPixbuf *pixbuf) { if (pixbuf) g_object_unref(pixbuf); }
static inline void clibnotify_loader_unref(GdkPixbufLoader *loader) { if (loader) g_object_unref(loader); }
static inline void clibnotify_notification_unref(NotifyNotification *n) { if (n) g_object_unref(n); }
static inline void clibnotify_free_string(char *s) { g_free(s); }
static inline void clibnotify_free_string_list(GList *list) { g_list_free_full(list, g_free); }
#endif
