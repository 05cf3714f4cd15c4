import Foundation

extension GatewaySetup {
    /// The certificate pin, decided as `ssh` decides on a host key: a Gateway already pinned for this
    /// host and port must present the pinned certificate (silently accepted); a different one is refused
    /// with both fingerprints, even with `--yes`, unless `--trust NEW` names it or `--replace-pin` lets it
    /// be asked for (or `--yes`). A first-seen certificate comes from the code, `--trust`, a prompt or
    /// `--yes`. Nil for `ws://` and for system-trusted certificates without a pin.
    func decidePin(
        _ endpoint: GatewayEndpoint, _ request: Request, previous: GatewayConfig?, _ hooks: Hooks
    ) async throws -> String? {
        guard endpoint.scheme == .wss else { return nil }
        let trust = try request.trustFingerprint.map { text throws(SetupError) in
            do { return try CertificateFingerprint.normalize(text) } catch { throw SetupError.badTrustFingerprint(text) }
        }
        let fromCode = request.code.tlsFingerprint
        if let fromCode, let trust, fromCode != trust { throw SetupError.pinConflict(code: fromCode, trust: trust) }
        let given = fromCode ?? trust
        let known = Self.pinnedBefore(endpoint, previous)

        if let known, !request.replacePin {
            if let given, given != known {
                // Named explicitly with --trust: the user has checked the new certificate.
                guard trust == given else {
                    throw SetupError.certificateChanged(host: Self.hostPort(endpoint), pinned: known, presented: given, fromCode: true)
                }
                try await probeRefusingMismatch(endpoint, pin: given)
                hooks.progress(.pinReplaced(old: known, new: given))
                return given
            }
            do {
                try await probe(endpoint, pin: known)
            } catch TransportError.pinMismatch(_, let actual) {
                // (A --trust naming the new certificate took the branch above.)
                throw SetupError.certificateChanged(host: Self.hostPort(endpoint), pinned: known, presented: actual, fromCode: false)
            } catch {
                // Not up yet, or a timeout: the connection retries these with the pin kept.
            }
            return known
        }
        if let given {
            try await probeRefusingMismatch(endpoint, pin: given)
            if let known, known != given { hooks.progress(.pinReplaced(old: known, new: given)) }
            return given
        }
        do {
            try await probe(endpoint, pin: nil)
            return nil  // the system trust store vouches for it
        } catch TransportError.untrustedCertificate(let host, let fingerprint, _) {
            if let known, known != fingerprint {
                // --replace-pin: the change is asked for, never assumed, unless --yes says so.
                let answer = request.assumeYes ? true : await hooks.confirmReplace(Self.hostPort(endpoint), known, fingerprint)
                switch answer {
                case true?:
                    hooks.progress(.pinReplaced(old: known, new: fingerprint))
                    return fingerprint
                case false?: throw SetupError.trustDeclined(fingerprint: fingerprint)
                case nil: throw SetupError.replaceNeedsAnswer(pinned: known, presented: fingerprint)
                }
            }
            if known == fingerprint { return fingerprint }
            if request.assumeYes { return fingerprint }
            switch await hooks.confirmTrust(host, fingerprint) {
            case true?: return fingerprint
            case false?: throw SetupError.trustDeclined(fingerprint: fingerprint)
            case nil: throw SetupError.trustNeedsAnswer(fingerprint: fingerprint)
            }
        }
    }

    /// The pin stored for this scheme, host and port, if any: a known Gateway, as `known_hosts` keys on them.
    static func pinnedBefore(_ endpoint: GatewayEndpoint, _ previous: GatewayConfig?) -> String? {
        guard let previous, let old = try? GatewayEndpoint(parsing: previous.url),
              old.scheme == endpoint.scheme, old.host == endpoint.host, old.port == endpoint.port else { return nil }
        return previous.tlsFingerprint
    }

    static func hostPort(_ endpoint: GatewayEndpoint) -> String {
        endpoint.host.contains(":") ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
    }

    /// A certificate that does not match is refused now, before anything is stored. Other failures (the
    /// Gateway not up yet) are left to the connection, which retries them.
    private func probeRefusingMismatch(_ endpoint: GatewayEndpoint, pin: String) async throws {
        do { try await probe(endpoint, pin: pin) } catch let mismatch as TransportError {
            if case .pinMismatch = mismatch { throw mismatch }
        } catch {}
    }

    /// One TLS connection and WebSocket upgrade, closed at once: checks the certificate before setup goes on.
    private func probe(_ endpoint: GatewayEndpoint, pin: String?) async throws {
        var options = WebSocketClient.Options(tlsPinSHA256: pin, caFile: caFile)
        options.closeTimeout = .milliseconds(200)
        options.resolver = resolver
        let probe = try await WebSocketClient.connect(to: endpoint, options: options, logger: logger)
        await probe.close()
    }
}

/// Why setup could not finish.
package enum SetupError: Error, Equatable, CustomStringConvertible {
    case noCredential
    case badTrustFingerprint(String)
    case trustDeclined(fingerprint: String)
    case trustNeedsAnswer(fingerprint: String)
    /// The setup code's pin and `--trust` name different certificates.
    case pinConflict(code: String, trust: String)
    /// A pinned Gateway presents (or the code names) another certificate.
    case certificateChanged(host: String, pinned: String, presented: String, fromCode: Bool)
    /// `--replace-pin` without a terminal or `--yes` to confirm it.
    case replaceNeedsAnswer(pinned: String, presented: String)
    /// Transient failures went on past `--timeout`.
    case gaveUp(reason: String, seconds: Int)
    /// No role was approved before the code expired (or `--timeout`).
    case approvalTimedOut(requestIds: [String])
    case stopped(String)

    package var description: String {
        switch self {
        case .noCredential:
            "The setup code carries no token; pass --token-file or --password-file (or set OPENCLAW_TALK_TOKEN), "
                + "or make a new code with 'openclaw qr'."
        case .badTrustFingerprint(let t): "--trust '\(t.prefix(100))' is not a SHA-256 fingerprint (64 hex digits)."
        case .trustDeclined(let fp):
            "Not connecting: the certificate \(CertificateFingerprint.display(fp)) was not trusted."
        case .trustNeedsAnswer(let fp):
            "The Gateway's certificate is not trusted by this system and no one can be asked (stdin is not a terminal). "
                + "Verify its SHA-256 fingerprint \(CertificateFingerprint.display(fp)) out of band, then run again with --trust \(fp) (or --yes)."
        case .pinConflict(let code, let trust):
            "The setup code pins the certificate \(CertificateFingerprint.display(code)) but --trust names "
                + "\(CertificateFingerprint.display(trust)). Not connecting: check which one the Gateway really has."
        case .certificateChanged(let host, let pinned, let presented, let fromCode):
            "WARNING: the Gateway certificate for \(host) has changed.\n"
                + "  pinned at setup:  \(CertificateFingerprint.display(pinned))\n"
                + "  \(fromCode ? "in the setup code:" : "presented now:  ") \(CertificateFingerprint.display(presented))\n"
                + "Someone may be intercepting the connection, or the Gateway got a new certificate. Nothing was changed "
                + "and nothing was sent. If you verified the new fingerprint out of band, run setup again with "
                + "--trust \(presented) (or --replace-pin to be asked)."
        case .replaceNeedsAnswer(let pinned, let presented):
            "--replace-pin: the pinned certificate \(CertificateFingerprint.display(pinned)) would be replaced by "
                + "\(CertificateFingerprint.display(presented)), and no one can be asked (stdin is not a terminal). "
                + "Run again with --trust \(presented) once you have verified it."
        case .gaveUp(let reason, let seconds):
            "Gave up after \(seconds) s without reaching the Gateway: \(reason) (--timeout sets how long to keep trying)."
        case .approvalTimedOut(let ids):
            "No role of this device was approved while the setup code lived"
                + (ids.isEmpty ? "" : " (requests: \(Set(ids).sorted().filter(GatewayText.isRequestId).joined(separator: ", ")))")
                + ". Approve them on the Gateway host ('openclaw devices approve <id>') while setup waits, "
                + "or make a new setup code with 'openclaw qr' and run setup again."
        case .stopped(let reason): reason
        }
    }
}
