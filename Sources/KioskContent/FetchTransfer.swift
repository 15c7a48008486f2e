// SPDX-License-Identifier: Apache-2.0
import CKioskCurl
import CLibCurl
import FoundationEssentials
import Glibc
import KioskSystem

/// One request (and everyone who joined it) and, while it runs, its libcurl easy handle. The
/// handle and every field below `completions` belong to the fetcher's thread: libcurl calls
/// ``header(_:)`` and ``body(_:)`` from `curl_multi_perform` there, as the bytes arrive, and
/// they enforce the byte cap, the redirect rules and the signature check at once.
final class FetchJob {
    /// An image (its manifest SHA-256; the cached entry's validators to revalidate it with a
    /// conditional GET), or a manifest (with the stored one's validators).
    enum Kind { case image(sha256: String?, validators: ManifestValidators? = nil), manifest(ManifestValidators?) }
    /// An image in the cache (`changed`: false when the body was the one already there), an
    /// image the server confirmed unchanged (a 304 to a revalidation), or a manifest.
    enum Payload { case entry(DiskCache.Entry, changed: Bool), unchanged, manifest(ManifestResponse) }
    typealias Completion = @Sendable (Result<Payload, ContentError>) -> Void

    let key: String
    let url: String
    let kind: Kind
    /// Guarded by the fetcher's state lock.
    var completions: [Completion] = []
    var done = false
    /// A slot needs it now (``Fetcher/fetchImage(_:sha256:useCache:urgent:completion:)``): it
    /// may start beyond ``Fetcher/Configuration/maxConcurrent`` (``Fetcher/urgentLanes``).
    /// Guarded by the fetcher's state lock.
    var urgent = false

    // Owned by the fetcher's thread.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    /// The URLs visited: the request's, then each redirect's `Location`, resolved.
    var chain: [String]
    /// The status of the response being read (each redirect's, then the final one).
    var status = 0
    /// Header fields of that response, by lower-case name (only the ones used).
    var fields: [String: String] = [:]
    /// True once a whole header block (of any response) has come: the connect timeout no
    /// longer applies.
    var gotHeaders = false
    /// True once the final (2xx) response's headers have been accepted.
    var accepted = false
    var declared: Int?
    var received = 0
    var head: [UInt8] = []
    var body: [UInt8] = []
    var writer: CacheWriter?
    /// Decided by us (a cap passed, a refused redirect, a 304, a timeout): wins over what
    /// libcurl reports when the transfer ends.
    var outcome: Result<Payload, ContentError>?
    var connectDeadline = ContinuousClock.now
    var totalDeadline = ContinuousClock.now
    /// The byte cap of the body.
    let cap: Int
    let maxRedirects: Int
    /// The proxies libcurl takes, to name the one an answer or a failure came through.
    let proxies: ProxyChoice
    /// Which hosts may be asked (every redirect, every address connected to).
    let policy: HostPolicy
    /// Whether an https request may be redirected to plain http.
    let allowDowngrade: Bool
    /// Why the last address libcurl was about to connect to was refused (``mayConnect(_:to:)``):
    /// the failure when the transfer then fails to connect.
    var refusedConnection: ContentError?

    init(key: String, url: String, kind: Kind, cap: Int, maxRedirects: Int,
         proxies: ProxyChoice = ProxyChoice(option: nil, environment: [:]), policy: HostPolicy = HostPolicy(),
         allowDowngrade: Bool = false) {
        self.key = key; self.url = url; self.kind = kind; self.cap = cap; self.maxRedirects = maxRedirects
        self.proxies = proxies
        self.policy = policy
        self.allowDowngrade = allowDowngrade
        chain = [url]
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    var isImage: Bool { if case .image = kind { return true }; return false }

    /// libcurl's message for a failed transfer (`CURLOPT_ERRORBUFFER`, else `curl_easy_strerror`).
    func curlMessage(_ code: CURLcode) -> String {
        let text = String(cString: errorBuffer)
        return text.isEmpty ? String(cString: kc_curl_easy_strerror(code)) : text
    }

    // MARK: - libcurl callbacks (the fetcher's thread)

    /// One header line (`CURLOPT_HEADERFUNCTION`: status line, field, or the empty line that
    /// ends a block). Returns false to end the transfer (``outcome`` says why).
    func header(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = raw.count
        while end > 0 && (raw[end - 1] == 0x0D || raw[end - 1] == 0x0A) { end -= 1 }  // CR LF
        let line = String(decoding: raw[..<end], as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            fields = [:]
            return true
        }
        if !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return true }
            let name = line[..<colon].lowercased()
            if ["location", "etag", "last-modified", "content-length", "content-encoding", "retry-after"]
                .contains(name) {
                fields[name] = line[line.index(after: colon)...].trimmingASCIISpaces()
            }
            return true
        }
        // The end of a header block.
        if (100..<200).contains(status) { return true }  // 100 Continue and the like
        gotHeaders = true
        if [301, 302, 303, 307, 308].contains(status), let location = fields["location"] {
            return redirect(to: location)
        }
        if case .manifest = kind, status == 304 {
            outcome = .success(.manifest(.notModified))
            return false
        }
        if case .image(_, _?) = kind, status == 304 {
            outcome = .success(.unchanged)
            return false
        }
        guard (200..<300).contains(status) else {
            // A plain-http request's answer came through the proxy, which may have sent it (an
            // https one's came from the server through a tunnel).
            let last = chain[chain.count - 1]
            let proxy = last.startsWithScheme("http:") ? proxies.proxy(for: last)?.description : nil
            outcome = .failure(.httpStatus(url: url, status: status, retryAfter: Self.retryAfter(fields["retry-after"]),
                                           proxy: proxy))
            return false
        }
        if let encoding = fields["content-encoding"]?.lowercased(), encoding != "identity" {
            // We asked for identity; an inflated body would escape the byte cap.
            outcome = .failure(.transport(url: url, reason: "the server sent a \(encoding)-encoded body although"
                                          + " only identity was accepted",
                                          receivedBytes: 0))
            return false
        }
        if let length = fields["content-length"].flatMap({ Int($0) }), length >= 0 {
            declared = length
            if length > cap {
                outcome = .failure(.bodyTooLarge(url: url, limit: cap, declaredBytes: length, receivedBytes: 0))
                return false
            }
        }
        accepted = true
        return true
    }

    /// A `Retry-After` value in delay-seconds (RFC 9110 §10.2.3: `1*DIGIT`), at most a day;
    /// nil when absent, an HTTP-date, or anything else.
    static func retryAfter(_ value: String?) -> Duration? {
        guard let value, !value.isEmpty, value.utf8.count <= 12, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let seconds = Int(value) else { return nil }
        return .seconds(min(seconds, 86_400))
    }

    /// A redirect's `Location`, resolved against the URL that sent it (RFC 3986 §5.2, by
    /// libcurl's URL parser): a loop, one too many, or a scheme other than http(s) ends the
    /// transfer; otherwise libcurl follows it.
    private func redirect(to location: String) -> Bool {
        guard let next = resolve(location, against: chain[chain.count - 1]) else {
            outcome = .failure(.httpStatus(url: url, status: status))
            return false
        }
        if chain.contains(next.url) {
            outcome = .failure(.tooManyRedirects(url: url, chain: chain + [next.url], limit: maxRedirects, loop: true))
            return false
        }
        if chain.count > maxRedirects {
            outcome = .failure(.tooManyRedirects(url: url, chain: chain + [next.url], limit: maxRedirects, loop: false))
            return false
        }
        if next.scheme != "http" && next.scheme != "https" {
            outcome = .failure(.redirectRefused(url: url, location: next.url))
            return false
        }
        if let refused = Self.check(next.url, for: url, after: chain[chain.count - 1], policy: policy,
                                    allowDowngrade: allowDowngrade, proxies: proxies) {
            outcome = .failure(refused)
            return false
        }
        chain.append(next.url)
        return true
    }

    /// Why `target` (the request `url` itself, or a redirect of it from `previous`) may not be
    /// asked, or nil: an https-to-http redirect (unless `allowDowngrade`), a host ``HostPolicy``
    /// refuses by its name or address, or one it admits only by the address it resolves to
    /// while a proxy (which resolves it itself) would be asked.
    static func check(_ target: String, for url: String, after previous: String?, policy: HostPolicy,
                      allowDowngrade: Bool, proxies: ProxyChoice) -> ContentError? {
        if let previous, !allowDowngrade, previous.startsWithScheme("https:"), target.startsWithScheme("http:") {
            return .downgradeRefused(url: url, location: target)
        }
        guard let host = urlHost(target) else { return .unsupportedURL(url: target) }
        let redirect = previous == nil ? "" : "redirect to \(Log.hidingPasswords(target)): "
        switch policy.decide(host: host) {
        case .allowed:
            return nil
        case .refused(let reason):
            return .hostRefused(url: url, host: host, reason: redirect + reason)
        case .needsAddress:
            guard let proxy = proxies.proxy(for: target) else { return nil }
            return .hostRefused(url: url, host: host, reason: redirect + "\(host) is not among --allow-hosts by name, "
                                + "and through \(proxy) the address it resolves to cannot be checked"
                                + " against its ranges")
        }
    }

    /// `CURLOPT_OPENSOCKETFUNCTION`'s check: whether libcurl may connect to `address` for this
    /// transfer. Not asked of a proxy's address (the host's own name went through ``check``).
    func mayConnect(to address: IPAddress) -> Bool {
        let target = chain[chain.count - 1]
        if proxies.proxy(for: target) != nil { return true }
        guard let host = urlHost(target) else { return false }
        guard let reason = policy.decide(address: address, host: host) else { return true }
        let redirect = chain.count > 1 ? "redirect to \(Log.hidingPasswords(target)): " : ""
        let shown = IPAddress.parse(host: host) == .address(address) ? "" : "\(HostPolicy.normalise(host)) resolved to "
        refusedConnection = .hostRefused(url: url, host: host, reason: redirect + shown + reason)
        return false
    }

    /// Body bytes (`CURLOPT_WRITEFUNCTION`). Returns false to end the transfer.
    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if outcome != nil { return false }
        guard accepted else { return true }  // the body of a redirect libcurl is following
        let before = received
        received += bytes.count
        if received > cap {
            outcome = .failure(.bodyTooLarge(url: url, limit: cap, declaredBytes: declared, receivedBytes: before))
            return false
        }
        if head.count < Fetcher.magicLength { head += bytes.prefix(Fetcher.magicLength - head.count) }
        switch kind {
        case .manifest:
            body += bytes
        case .image:
            if let bad = Fetcher.magicProblem(head, complete: false) {
                outcome = .failure(.notAnImage(url: url, firstBytes: bad))
                return false
            }
            do {
                try writer?.append(bytes)
            } catch {
                outcome = .failure(error)
                return false
            }
        }
        return true
    }

    // MARK: - The end of a transfer

    /// libcurl's longest header line, CURL_MAX_HTTP_HEADER in curl/curl.h (bytes).
    static let maxHeaderLine = 100 * 1024
    /// CURLE_TOO_LARGE (curl/curl.h from libcurl 8.6), what newer libcurl returns for it.
    static let curleTooLarge: UInt32 = 100

    /// What a transfer that libcurl ended with `code` gives. A failure before any response
    /// names the proxy it went through (its URL without the password and where it was set).
    func result(_ code: CURLcode, connectTimeout: Duration, lowSpeedTime: Duration) -> Result<Payload, ContentError> {
        if let outcome { return outcome }
        if code == CURLE_COULDNT_CONNECT, !gotHeaders, let refusedConnection { return .failure(refusedConnection) }
        if let declared, received < declared, code == CURLE_PARTIAL_FILE || code == CURLE_RECV_ERROR {
            return .failure(.truncated(url: url, expectedBytes: declared, receivedBytes: received))
        }
        let host = hostOf(chain[chain.count - 1])
        // Before any response the failure may be the proxy's: say so, and which one.
        if code != CURLE_OK, code != CURLE_OPERATION_TIMEDOUT, !gotHeaders,
           let proxy = proxies.proxy(for: chain[chain.count - 1]) {
            let said = "\(curlMessage(code)) (libcurl error \(code.rawValue))"
            if let problem = proxy.problem {
                return .failure(.transport(url: url, reason: "\(proxy) is not usable: \(problem); "
                                           + "libcurl said: \(said)", receivedBytes: received))
            }
            switch code {
            case CURLE_COULDNT_RESOLVE_PROXY:
                return .failure(.transport(url: url, reason: "cannot resolve \(proxy) (DNS): \(said)",
                                           receivedBytes: received))
            case CURLE_COULDNT_CONNECT:
                return .failure(.transport(url: url, reason: "cannot connect to \(proxy): \(said)",
                                           receivedBytes: received))
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
                 CURLE_SSL_CONNECT_ERROR,
                 CURLE_SSL_CERTPROBLEM:
                break  // the server's name or certificate, below (the proxy resolves the name for http)
            default:
                return .failure(.transport(url: url, reason: "through \(proxy): \(said)", receivedBytes: received))
            }
        }
        switch code {
        case CURLE_OK:
            return complete()
        case CURLE_OUT_OF_MEMORY where !gotHeaders, CURLcode(rawValue: Self.curleTooLarge):
            // libcurl keeps one header line in a buffer of at most CURL_MAX_HTTP_HEADER
            // (100 KiB, curl/curl.h) and fails a longer one with CURLE_OUT_OF_MEMORY (libcurl
            // 7.88's dynbuf; CURLE_TOO_LARGE from 8.6 on), with no message of its own.
            let said = String(cString: errorBuffer)
            return .failure(.transport(url: url, reason: "response header too large: a header line over "
                                       + "libcurl's limit of \(Self.maxHeaderLine / 1024) KiB (CURL_MAX_HTTP_HEADER)"
                                       + (said.isEmpty ? "" : ": \(said)"),
                                       receivedBytes: received))
        case CURLE_OPERATION_TIMEDOUT:
            return gotHeaders
                ? .failure(.timedOut(url: url, phase: "low-speed", seconds: seconds(lowSpeedTime),
                                     receivedBytes: received))
                : .failure(.timedOut(url: url, phase: "connect", seconds: seconds(connectTimeout), receivedBytes: 0))
        case CURLE_FILESIZE_EXCEEDED:
            // libcurl checks CURLOPT_MAXFILESIZE_LARGE as the Content-Length line arrives.
            let said = declared ?? fields["content-length"].flatMap { Int($0) }
            return .failure(.bodyTooLarge(url: url, limit: cap, declaredBytes: said, receivedBytes: received))
        case CURLE_TOO_MANY_REDIRECTS:
            return .failure(.tooManyRedirects(url: url, chain: chain, limit: maxRedirects, loop: false))
        case CURLE_UNSUPPORTED_PROTOCOL where chain.count > 1 || status != 0:
            return .failure(.redirectRefused(url: url, location: fields["location"] ?? curlMessage(code)))
        case CURLE_COULDNT_RESOLVE_HOST:
            return .failure(.transport(url: url, reason: "cannot resolve host \(host) (DNS): \(curlMessage(code))",
                                       receivedBytes: received))
        case CURLE_COULDNT_RESOLVE_PROXY:
            return .failure(.transport(url: url, reason: "cannot resolve the proxy (DNS): \(curlMessage(code))",
                                       receivedBytes: received))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM:
            return .failure(.transport(url: url,
                                       reason: "TLS with \(host) failed, certificate not accepted: "
                                           + "\(curlMessage(code))",
                                       receivedBytes: received))
        default:
            return .failure(.transport(url: url, reason: "\(curlMessage(code)) (libcurl error \(code.rawValue))",
                                       receivedBytes: received))
        }
    }

    /// A transfer libcurl finished without error: checks and commits.
    private func complete() -> Result<Payload, ContentError> {
        guard accepted else { return .failure(.transport(url: url, reason: "no response", receivedBytes: received)) }
        if let declared, declared != received {
            return .failure(.truncated(url: url, expectedBytes: declared, receivedBytes: received))
        }
        switch kind {
        case .manifest:
            var effective: UnsafeMutablePointer<CChar>?
            let final = easy.flatMap {
                kc_curl_getinfo_string($0, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK ? effective : nil
            }
                .map { String(cString: $0) } ?? chain[chain.count - 1]
            guard let finalURL = URL(string: final) ?? URL(string: chain[chain.count - 1]) else {
                return .failure(.unsupportedURL(url: final))
            }
            let validators = ManifestValidators(etag: fields["etag"], lastModified: fields["last-modified"])
            return .success(.manifest(.modified(ManifestDownload(url: finalURL, body: body, validators: validators))))
        case .image(let sha256, _):
            if let bad = Fetcher.magicProblem(head, complete: true) {
                return .failure(.notAnImage(url: url, firstBytes: bad))
            }
            guard let writer else { return .failure(.cancelled(url: url)) }
            self.writer = nil
            let validators = ManifestValidators(etag: fields["etag"], lastModified: fields["last-modified"])
            do {
                let entry = try writer.commit(expectedSHA256: sha256, validators: validators)
                return .success(.entry(entry, changed: !writer.keptEarlierFile))
            } catch {
                return .failure(error)
            }
        }
    }
}

/// `reference` resolved against `base` by libcurl's URL parser (RFC 3986 §5.2), any scheme
/// allowed (so that a refused one can be named), with its lower-case scheme.
func resolve(_ reference: String, against base: String) -> (url: String, scheme: String)? {
    guard let handle = kc_curl_url() else { return nil }
    defer { kc_curl_url_cleanup(handle) }
    let flags = UInt32(CURLU_NON_SUPPORT_SCHEME)
    guard kc_curl_url_set(handle, CURLUPART_URL, base, flags) == CURLUE_OK,
          kc_curl_url_set(handle, CURLUPART_URL, reference, flags) == CURLUE_OK else { return nil }
    func part(_ which: CURLUPart) -> String? {
        var text: UnsafeMutablePointer<CChar>?
        guard kc_curl_url_get(handle, which, &text, 0) == CURLUE_OK, let text else { return nil }
        defer { kc_curl_free(text) }
        return String(cString: text)
    }
    guard let url = part(CURLUPART_URL), let scheme = part(CURLUPART_SCHEME) else { return nil }
    return (url, scheme.lowercased())
}

/// The host of an absolute URL as libcurl's URL parser reads it (the host it connects to:
/// numeric IPv4 forms normalised, IPv6 in brackets without its zone), nil when it has none.
func urlHost(_ url: String) -> String? {
    guard let handle = kc_curl_url() else { return nil }
    defer { kc_curl_url_cleanup(handle) }
    var text: UnsafeMutablePointer<CChar>?
    guard kc_curl_url_set(handle, CURLUPART_URL, url, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
          kc_curl_url_get(handle, CURLUPART_HOST, &text, 0) == CURLUE_OK, let text else { return nil }
    defer { kc_curl_free(text) }
    return String(cString: text)
}

/// The host of an absolute URL (for messages), or the URL itself.
func hostOf(_ url: String) -> String {
    guard let handle = kc_curl_url() else { return url }
    defer { kc_curl_url_cleanup(handle) }
    var text: UnsafeMutablePointer<CChar>?
    guard kc_curl_url_set(handle, CURLUPART_URL, url, UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
          kc_curl_url_get(handle, CURLUPART_HOST, &text, 0) == CURLUE_OK, let text else { return url }
    defer { kc_curl_free(text) }
    return String(cString: text)
}

extension StringProtocol {
    /// Whether the text starts with `scheme` (lower-case ASCII with its colon, `http:`) in any
    /// case, compared by UTF-8 bytes: a combining mark after the colon or on a following slash
    /// joins them into one `Character`, which a comparison of Characters would not match.
    func startsWithScheme(_ scheme: String) -> Bool {
        let head = utf8.prefix(scheme.utf8.count)
        return head.count == scheme.utf8.count && String(decoding: head, as: UTF8.self).lowercased() == scheme
    }

    /// Without leading and trailing spaces and tabs (HTTP's OWS, RFC 9110 §5.6.3).
    func trimmingASCIISpaces() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return String(s)
    }
}

/// A `Duration` as seconds.
func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// A `Duration` as whole milliseconds (at least 1).
func milliseconds(_ d: Duration) -> Int {
    max(1, Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000))
}
