#pragma once
#include <speex/speex_echo.h>
