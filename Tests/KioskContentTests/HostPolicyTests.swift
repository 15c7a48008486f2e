// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
@testable import KioskContent
import KioskSystem
import Testing

private func address(_ host: String) -> String? {
    guard case .address(let a) = IPAddress.parse(host: host) else { return nil }
    return a.description
}

/// Every numeric form a resolver takes for an address is read as that address.
@Test func numericHostFormsAreNormalised() {
    for form in ["127.0.0.1", "2130706433", "0x7f000001", "0X7F000001", "0177.0.0.1", "0177.1", "127.1", "127.0.1",
                 "0x7f.0.0.1", "0x7f.1", "127.0.0.1.", "017700000001"] {
        #expect(address(form) == "127.0.0.1", "\(form)")
    }
    for form in ["169.254.169.254", "0xa9fea9fe", "2852039166", "0251.0376.0251.0376", "169.16689662",
                 "0xa9.0xfe.0xa9fe"] {
        #expect(address(form) == "169.254.169.254", "\(form)")
    }
    #expect(address("[::1]") == "::1")
    #expect(address("[fe80::1%25eth0]") == "fe80::1")
    #expect(address("fe80::1%eth0") == "fe80::1")
    #expect(address("[::ffff:169.254.169.254]") == "::ffff:169.254.169.254")
    #expect(address("0x") == "0.0.0.0")
    // Ends in a number but is no address: refused rather than given to a resolver.
    for bad in ["1.2.3.999", "256.1.1.1", "1.2.3.4.5", "0x100000000", "4294967296", "1.2.3.08",
                "99999999999999999999999", "[::g]", "[]", "1..2"] {
        #expect(IPAddress.parse(host: bad) == .invalid, "\(bad)")
    }
    // Normalising is idempotent: a host with several trailing dots (the fuzz target's
    // `55.5.3..`) was a name whose normalised form, its dots gone, read as 55.5.0.3.
    for host in ["55.5.3..", "127.0.0.1..", "0x7f000001...", "Example.COM..", "cdn.example.com.", "0177.1"] {
        let normal = HostPolicy.normalise(host)
        #expect(HostPolicy.normalise(normal) == normal, "\(host) -> \(normal)")
    }
    #expect(IPAddress.parse(host: "55.5.3..") == .invalid)
    guard case .refused = HostPolicy().decide(host: "169.254.169.254..") else {
        Issue.record("169.254.169.254.. allowed")
        return
    }
    for name in ["example.com", "cdn.example.com.", "1.2.3.example", "0x7f.example", "localhost", "a1", "1a",
                 "1.2.0x1g"] {
        #expect(IPAddress.parse(host: name) == .name, "\(name)")
    }
}

@Test func embeddedIPv4AddressesAreFound() {
    func embedded(_ host: String) -> String? {
        guard case .address(let a) = IPAddress.parse(host: host) else { return nil }
        return a.embeddedIPv4?.description
    }
    #expect(embedded("[::ffff:169.254.169.254]") == "169.254.169.254")
    #expect(embedded("[::169.254.169.254]") == "169.254.169.254")
    #expect(embedded("[64:ff9b::a9fe:a9fe]") == "169.254.169.254")
    #expect(embedded("[2002:a9fe:a9fe::1]") == "169.254.169.254")
    #expect(embedded("[::1]") == nil)
    #expect(embedded("[::]") == nil)
    #expect(embedded("[2001:db8::1]") == nil)
}

@Test func rangesHoldTheirAddresses() throws {
    let ten = try #require(IPRange(parsing: "10.0.0.0/8"))
    #expect(ten.contains(try #require(IPAddress(bytes: [10, 200, 3, 4]))))
    #expect(!ten.contains(try #require(IPAddress(bytes: [11, 0, 0, 0]))))
    #expect(IPRange(parsing: "10.1.2.3/8")?.description == "10.0.0.0/8")
    #expect(IPRange(parsing: "2001:db8::/32")?.description == "2001:db8::/32")
    #expect(IPRange(parsing: "10.0.0.1")?.prefixLength == 32)
    #expect(IPRange(parsing: "::1")?.prefixLength == 128)
    #expect(IPRange(parsing: "0.0.0.0/0")?.contains(try #require(IPAddress(bytes: [8, 8, 8, 8]))) == true)
    for bad in ["10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "::/129", "example.com/8", "10.0.0.0/8/8", "10.0.0.0/0x8"] {
        #expect(IPRange(parsing: bad) == nil, "\(bad)")
    }
}

@Test func allowHostsPatternsParseAndBadOnesAreNamed() throws {
    let patterns = try HostPolicy.parsePatterns("cdn.example.com, .media.example.org,*.example.net,10.0.0.0/8,"
                                                + "[2001:db8::]/32,192.0.2.7,CAPS.Example")
    #expect(patterns == [.name("cdn.example.com"), .domain("media.example.org"), .domain("example.net"),
                         .range(IPRange(parsing: "10.0.0.0/8")!), .range(IPRange(parsing: "2001:db8::/32")!),
                         .range(IPRange(parsing: "192.0.2.7/32")!), .name("caps.example")])
    for (bad, says) in [("", "empty"), ("a,,b", "empty"), ("10.0.0.0/40", "CIDR"), ("exa mple.com", "host name"),
                        ("1.2.3.999", "address"), ("*.10.0.0.1", "address"), ("a..b", "host name"),
                        ("ex/ample", "CIDR")] {
        do {
            _ = try HostPolicy.parsePatterns(bad)
            Issue.record("\(bad) accepted")
        } catch {
            #expect(error.description.contains(says), "\(bad): \(error)")
        }
    }
}

@Test func refusedRangesAndNamesWithoutAllowHosts() throws {
    let policy = HostPolicy()
    func refused(_ host: String) -> Bool { if case .refused = policy.decide(host: host) { return true }; return false }
    for host in ["169.254.169.254", "0xa9fea9fe", "2852039166", "169.254.170.2", "[fe80::1]", "[fe80::1%25eth0]",
                 "[fd00:ec2::254]", "100.100.100.200", "192.0.0.192", "0.0.0.0", "0", "[::]",
                 "[::ffff:169.254.169.254]", "[::ffff:a9fe:a9fe]", "[64:ff9b::a9fe:a9fe]", "[2002:a9fe:a9fe::]",
                 "metadata.google.internal", "METADATA.GOOGLE.INTERNAL.",
                 "1.2.3.999"] {
        #expect(refused(host), "\(host)")
    }
    for host in ["127.0.0.1", "2130706433", "[::1]", "10.1.2.3", "192.168.1.20", "cdn.example.com", "169.253.255.255",
                 "169.255.0.0", "100.100.100.201"] {
        #expect(policy.decide(host: host) == .allowed, "\(host)")
    }
    // The reason names the address as normalised and what it is.
    guard case .refused(let reason) = policy.decide(host: "0xa9fea9fe") else { Issue.record("allowed"); return }
    #expect(reason.contains("169.254.169.254") && reason.contains("link-local"), "\(reason)")
}

@Test func allowHostsAdmitsItsNamesDomainsAndRangesAndTheConfiguredHosts() throws {
    let policy = HostPolicy(allowed: try HostPolicy.parsePatterns("cdn.example.com,.media.example.org,10.0.0.0/8"),
                            trustedHosts: ["Signs.Example.NET", "169.254.7.7"])
    #expect(policy.decide(host: "cdn.example.com") == .allowed)
    #expect(policy.decide(host: "CDN.example.com.") == .allowed)
    #expect(policy.decide(host: "media.example.org") == .allowed)
    #expect(policy.decide(host: "a.b.media.example.org") == .allowed)
    #expect(policy.decide(host: "10.9.8.7") == .allowed)
    #expect(policy.decide(host: "012.1") == .allowed)  // 10.0.0.1
    #expect(policy.decide(host: "signs.example.net") == .allowed)  // the manifest's own host
    #expect(policy.decide(host: "169.254.7.7") == .allowed)  // configured: trusted even link-local
    #expect(policy.decide(host: "0xa9fe0707") == .allowed)  // the same host, another form
    // A name only a range could admit: decided by the address it connects to.
    #expect(policy.decide(host: "other.example.com") == .needsAddress)
    #expect(policy.decide(host: "notmedia.example.org") == .needsAddress)
    for host in ["127.0.0.1", "2130706433", "11.0.0.1", "[::1]", "169.254.169.254"] {
        guard case .refused(let reason) = policy.decide(host: host) else {
            Issue.record("\(host): \(policy.decide(host: host))"); continue
        }
        #expect(reason.contains("--allow-hosts") || reason.contains("link-local"), "\(host): \(reason)")
    }
    let ten = try #require(IPAddress(bytes: [10, 1, 1, 1]))
    let loopback = try #require(IPAddress(bytes: [127, 0, 0, 1]))
    let metadata = try #require(IPAddress(bytes: [169, 254, 169, 254]))
    #expect(policy.decide(address: ten, host: "other.example.com") == nil)
    #expect(policy.decide(address: loopback, host: "other.example.com")?.contains("not among --allow-hosts") == true)
    // An allowed name that resolves to a metadata address is refused (DNS rebinding).
    #expect(policy.decide(address: metadata, host: "cdn.example.com")?.contains("link-local") == true)
    #expect(policy.decide(address: metadata, host: "signs.example.net") == nil)
    // A range admits a refused address only by naming it.
    let linkLocal = HostPolicy(allowed: try HostPolicy.parsePatterns("169.254.0.0/16"))
    #expect(linkLocal.decide(host: "169.254.169.254") == .allowed)
    #expect(linkLocal.decide(address: metadata, host: "device.local") == nil)
}

// MARK: - The fetcher

private func makeFetcher(_ configure: (inout Fetcher.Configuration) -> Void = { _ in }) throws -> Fetcher {
    let cache = try DiskCache(.init(directory: makeTempDirectory("host-cache")))
    var config = Fetcher.Configuration()
    configure(&config)
    return Fetcher(cache: cache, configuration: config)
}

private func image(_ fetcher: Fetcher, _ url: String) throws -> Result<DiskCache.Entry, ContentError> {
    try waitFor { done in fetcher.fetchImage(url) { done($0) } }
}

/// A request, a redirect, or a name that resolves to a refused address goes nowhere; the error
/// names the host and why.
@Test func theFetcherAsksNoRefusedHost() throws {
    let faults = try FaultServer()
    defer { faults.stop() }
    let nginx = try Nginx()
    defer { nginx.stop() }
    try nginx.put("a.jpg", jpegBytes(3000))
    let fetcher = try makeFetcher()
    defer { fetcher.shutdown() }

    let direct = try image(fetcher, "http://0xa9fea9fe/latest/meta-data/")
    guard case .failure(.hostRefused(_, let host, let reason)) = direct else { Issue.record("\(direct)"); return }
    #expect(host == "169.254.169.254" && reason.contains("link-local"), "\(reason)")
    #expect(try image(fetcher, "http://[::ffff:169.254.169.254]/x").failureKind == "host-refused")

    // A 302 from an allowed server to the metadata address is not followed.
    let redirected = try image(fetcher, faults.base + "/go?http://169.254.169.254/latest/meta-data/")
    guard case .failure(.hostRefused(let url, _, let why)) = redirected else { Issue.record("\(redirected)"); return }
    #expect(url == faults.base + "/go?http://169.254.169.254/latest/meta-data/")
    #expect(why.contains("redirect to http://169.254.169.254/latest/meta-data/"), "\(why)")

    // --allow-hosts: the configured host always, others only by name or by the address they
    // connect to (a name only a range admits is checked as libcurl connects).
    let locked = try makeFetcher {
        $0.hostPolicy = HostPolicy(allowed: try! HostPolicy.parsePatterns("cdn.example.com,10.0.0.0/8"),
                                   trustedHosts: ["127.0.0.1"])
    }
    defer { locked.shutdown() }
    #expect(try image(locked, nginx.base + "/a.jpg").map(\.length) == .success(3000))
    let otherForm = try image(locked, "http://2130706433:\(nginx.port)/a.jpg")
    #expect(otherForm.map(\.length) == .success(3000), "the trusted host in another numeric form: \(otherForm)")
    let byName = try image(locked, "http://localhost:\(nginx.port)/a.jpg")
    guard case .failure(.hostRefused(_, "localhost", let connectReason)) = byName else {
        Issue.record("\(byName)"); return
    }
    #expect(connectReason.contains("localhost resolved to 127.0.0.1")
            || connectReason.contains("localhost resolved to ::1"),
            "\(byName)")
    #expect(!nginx.accessLog().contains { $0.contains("localhost") })
    let loopbackRange = try makeFetcher {
        $0.hostPolicy = HostPolicy(allowed: try! HostPolicy.parsePatterns("127.0.0.0/8,::1"))
    }
    defer { loopbackRange.shutdown() }
    #expect(try image(loopbackRange, "http://localhost:\(nginx.port)/a.jpg").map(\.length) == .success(3000))
}

/// An https request redirected to http is not followed, unless asked for.
@Test func anHTTPSRequestIsNotDowngradedToHTTP() throws {
    let job = FetchJob(key: "k", url: "https://a.example/x.jpg", kind: .image(sha256: nil), cap: 1000, maxRedirects: 5)
    let refused = FetchJob.check("http://a.example/x.jpg", for: job.url, after: "https://a.example/x.jpg",
                                 policy: HostPolicy(), allowDowngrade: false, proxies: job.proxies)
    #expect(refused == .downgradeRefused(url: "https://a.example/x.jpg", location: "http://a.example/x.jpg"))
    #expect(FetchJob.check("http://a.example/x.jpg", for: job.url, after: "https://a.example/x.jpg",
                           policy: HostPolicy(), allowDowngrade: true, proxies: job.proxies) == nil)
    #expect(FetchJob.check("https://b.example/x.jpg", for: job.url, after: "http://a.example/x.jpg",
                           policy: HostPolicy(), allowDowngrade: false, proxies: job.proxies) == nil)
    // Through the header callback, as libcurl delivers a 302.
    for line in ["HTTP/1.1 302 Found\r\n", "Location: http://a.example/plain.jpg\r\n", "\r\n"] {
        let bytes = Array(line.utf8)
        _ = bytes.withUnsafeBufferPointer { job.header($0) }
    }
    #expect(job.outcome.map { if case .failure(let e) = $0 { return e.kind }; return "ok" } == "downgrade-refused")
}

/// An https manifest that names a plain http image is refused, unless asked for.
@Test func anHTTPSManifestNamingHTTPImagesIsRefused() throws {
    let manifest = try Manifest.parse(Array(#"{"items":[{"src":"a.jpg"},{"src":"http://cdn.example/b.jpg"}]}"#.utf8),
                                      origin: .remote(URL(string: "https://signs.example/show.json")!))
    let problem = try #require(manifest.downgradeProblem(base: URL(string: "https://signs.example/show.json")!))
    #expect(problem.description.contains("items[1].src") && problem.description.contains("--allow-http-from-https"),
            "\(problem)")
    #expect(manifest.downgradeProblem(base: URL(string: "http://signs.example/show.json")!) == nil)
    // A combining mark after the colon: no URL with a host, refused as an item.
    #expect(throws: ContentError.self) {
        try Manifest.parse(Array("{\"items\":[{\"src\":\"http:\u{301}//cdn.example/b.jpg\"}]}".utf8),
                           origin: .remote(URL(string: "https://signs.example/show.json")!))
    }
}

/// A redirect's target is checked byte by byte: `https://` and a combining mark on its last
/// slash is still https (the redirects fuzz target's finding), `http:` and a mark still http.
@Test func schemePrefixesAreComparedByBytes() {
    #expect("https://\u{591}x.example/".startsWithScheme("https:"))
    #expect("HTTP:\u{301}//x.example/".startsWithScheme("http:"))
    #expect(!"https://x.example/".startsWithScheme("http:"))
    #expect(!"htt".startsWithScheme("http:"))
    let refused = FetchJob.check("http:\u{301}//x.example/", for: "https://signs.example/a.jpg",
                                 after: "https://signs.example/a.jpg", policy: HostPolicy(), allowDowngrade: false,
                                 proxies: ProxyChoice(option: nil, environment: [:]))
    #expect(refused?.kind == "downgrade-refused", "\(String(describing: refused))")
}

/// The address check of a connection refuses a name that resolves to a refused address.
@Test func aNameThatResolvesToARefusedAddressIsRefusedAtTheConnection() throws {
    let job = FetchJob(key: "k", url: "http://innocent.example/a.jpg", kind: .image(sha256: nil), cap: 1000,
                       maxRedirects: 5)
    #expect(!job.mayConnect(to: IPAddress(bytes: [169, 254, 169, 254])!))
    let refused = try #require(job.refusedConnection)
    #expect(refused.description.contains("innocent.example resolved to 169.254.169.254"), "\(refused)")
    #expect(job.mayConnect(to: IPAddress(bytes: [93, 184, 216, 34])!))
    let mapped = IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 169, 254, 169, 254])!
    #expect(!job.mayConnect(to: mapped))
}
