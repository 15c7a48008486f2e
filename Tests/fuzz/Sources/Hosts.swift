// SPDX-License-Identifier: Apache-2.0
// The fetch policy's fuzz targets (docs/security.md): host names and addresses, --allow-hosts
// lists, and redirects as libcurl hands their header lines to the fetcher.
import Glibc
@testable import KioskContent

// MARK: - hosts

/// A policy of each kind: none given, a list with names, domains and ranges, and one whose
/// range admits link-local addresses; the manifest's own host trusted in each.
let hostPolicies: [HostPolicy] = [
    HostPolicy(trustedHosts: ["signs.example"]),
    HostPolicy(allowed: try! HostPolicy.parsePatterns("cdn.example.com,.media.example.org,10.0.0.0/8,2001:db8::/32"),
               trustedHosts: ["signs.example"]),
    HostPolicy(allowed: try! HostPolicy.parsePatterns("169.254.0.0/16"), trustedHosts: ["192.0.2.1"]),
]

/// The IPv4 address glibc's inet_aton(3) reads `text` as (what getaddrinfo takes as a numeric
/// host), or nil.
func atonAddress(_ text: String) -> IPAddress? {
    var address = in_addr()
    guard text.withCString({ inet_aton($0, &address) }) == 1 else { return nil }
    return withUnsafeBytes(of: &address.s_addr) { IPAddress(bytes: Array($0)) }
}

/// Any bytes as a host (and as an `--allow-hosts` list). Invariants: an address reads back as
/// itself from its own text; normalising twice is normalising once; every IPv4 form inet_aton
/// takes is read as the same address (no numeric form escapes the checks); every address in a
/// refused range, and every form of it, is refused without a range that names it; the decision
/// on an address host is the decision on the address; a pattern list that parses parses again
/// from its own text to the same list.
func fuzzHosts(_ data: [UInt8]) {
    guard let text = String(validating: data, as: UTF8.self), !text.contains("\0") else { return }
    let parsed = IPAddress.parse(host: text)
    if case .address(let address) = parsed {
        guard IPAddress.parse(host: address.description) == .address(address) else {
            fuzzFailure("\(address) does not read back as itself", data)
        }
    }
    let normal = HostPolicy.normalise(text)
    guard HostPolicy.normalise(normal) == normal else { fuzzFailure("normalise is not idempotent: \(normal)", data) }
    if !text.contains(where: { $0.isWhitespace }), let aton = atonAddress(text) {
        guard parsed == .address(aton) else { fuzzFailure("inet_aton reads \(aton), the policy \(parsed)", data) }
    }
    for policy in hostPolicies {
        let decision = policy.decide(host: text)
        if case .address(let address) = parsed {
            let byAddress = policy.decide(address: address, host: text)
            switch decision {
            case .allowed where byAddress != nil, .refused where byAddress == nil && !policy.isTrusted(text):
                fuzzFailure("host and address decisions differ: \(decision) / \(String(describing: byAddress))", data)
            case .needsAddress:
                fuzzFailure("an address host needs an address check", data)
            default: break
            }
            let checked = address.embeddedIPv4 ?? address
            let refused = HostPolicy.refusedRanges.contains { $0.range.contains(checked) || $0.range.contains(address) }
            let admitted = policy.allowed?.contains {
                if case .range(let r) = $0 { r.contains(address) || r.contains(checked) } else { false }
            }
            if refused, admitted != true, !policy.isTrusted(text), decision == .allowed {
                fuzzFailure("\(address) is in a refused range but allowed", data)
            }
        }
        if case .invalid = parsed, !policy.isTrusted(text), decision == .allowed {
            fuzzFailure("an invalid numeric host is allowed", data)
        }
    }
    if let patterns = try? HostPolicy.parsePatterns(text) {
        let again = patterns.map(\.description).joined(separator: ",")
        guard (try? HostPolicy.parsePatterns(again)) == patterns else {
            fuzzFailure("patterns \(patterns) do not parse again from \(again)", data)
        }
    }
}

// MARK: - redirects

/// Any bytes as the redirects one request meets: the first byte picks the request's URL and
/// the policy, each following line is one response's `Location` (a 302 each), handed to the
/// fetcher's header callback as libcurl would. Invariants: a redirect the fetcher follows is
/// http or https, never from https to http, to a host the policy allows, and not already in
/// the chain; the chain never holds more than the redirect limit allows; a refusal is an error
/// the fetcher has a kind for.
func fuzzRedirects(_ data: [UInt8]) {
    guard let first = data.first else { return }
    let starts = ["http://signs.example/show.json", "https://signs.example/show.json", "https://cdn.example.com/a.jpg",
                  "http://10.1.2.3:8080/a.jpg"]
    let start = starts[Int(first) % starts.count]
    let policy = hostPolicies[Int(first / 4) % hostPolicies.count]
    let kind: FetchJob.Kind = first & 0x80 == 0 ? .image(sha256: nil) : .manifest(nil)
    let job = FetchJob(key: "k", url: start, kind: kind, cap: 1000, maxRedirects: 5, policy: policy)
    for line in data.dropFirst().split(separator: 0x0A, omittingEmptySubsequences: false).prefix(12) {
        guard job.outcome == nil else { break }
        let before = job.chain
        let location = Array("Location: ".utf8) + Array(line) + [0x0D, 0x0A]
        for header in [Array("HTTP/1.1 302 Found\r\n".utf8), location, [0x0D, 0x0A]] {
            _ = header.withUnsafeBufferPointer { job.header($0) }
        }
        if job.chain.count > before.count {
            let next = job.chain[job.chain.count - 1]
            let previous = before[before.count - 1]
            guard job.chain.count == before.count + 1 else { fuzzFailure("the chain grew by more than one", data) }
            // By bytes: "https://" and a combining mark on its slash is one Character less.
            guard next.utf8.starts(with: "http://".utf8) || next.utf8.starts(with: "https://".utf8) else {
                fuzzFailure("followed to \(next)", data)
            }
            if previous.utf8.starts(with: "https:".utf8), next.utf8.starts(with: "http:".utf8) {
                fuzzFailure("downgraded to \(next)", data)
            }
            guard let host = urlHost(next) else { fuzzFailure("no host in \(next)", data) }
            if case .refused(let why) = policy.decide(host: host) {
                fuzzFailure("followed to refused \(host): \(why)", data)
            }
            if before.contains(next) { fuzzFailure("followed a loop to \(next)", data) }
        }
        guard job.chain.count <= 6 else { fuzzFailure("\(job.chain.count) URLs in the chain, over the limit", data) }
    }
    if case .failure(let error)? = job.outcome {
        guard ["redirects", "redirect-refused", "host-refused", "downgrade-refused", "http-status", "unsupported-url"]
                .contains(error.kind) else {
            fuzzFailure("a redirect ended in \(error.kind): \(error)", data)
        }
    }
}
