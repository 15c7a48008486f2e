// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import KioskContent

/// The proxy a download goes through, as libcurl 7.88 picks it (lib/url.c detect_proxy,
/// lib/noproxy.c): the end-to-end proxy tests in FetcherLimitsTests check the same choices
/// against libcurl itself; these walk the rules one by one.
@Test func theProxyOfEachSchemeComesFromTheOptionOrTheVariablesLibcurlReads() {
    let env = ["http_proxy": "http://h:1", "HTTP_PROXY": "http://upper:1", "HTTPS_PROXY": "http://s:2",
               "all_proxy": "socks5h://a:3"]
    let choice = ProxyChoice(option: nil, environment: env)
    #expect(choice.http == .init(value: "http://h:1", origin: "http_proxy"))
    #expect(choice.https == .init(value: "http://s:2", origin: "HTTPS_PROXY"))
    // HTTP_PROXY is never read (a CGI program's environment takes it from a request header).
    let upper = ProxyChoice(option: nil, environment: ["HTTP_PROXY": "http://upper:1", "ALL_PROXY": "http://all:4",
                                                       "https_proxy": ""])
    #expect(upper.http == .init(value: "http://all:4", origin: "ALL_PROXY"))
    #expect(upper.https == .init(value: "http://all:4", origin: "ALL_PROXY"), "an empty variable counts as unset")
    let option = ProxyChoice(option: "http://u:pw@p:3128", environment: env)
    #expect(option.http?.origin == "--proxy" && option.https?.origin == "--proxy")
    #expect(option.http?.description == "the proxy http://u:***@p:3128 (--proxy)")
}

@Test func aValueLibcurlCannotUseSaysWhy() {
    func problem(_ value: String) -> String? { ProxyChoice.Proxy(value: value, origin: "http_proxy").problem }
    for good in ["http://proxy.lan:3128", "proxy.lan:3128", "proxy.lan", "https://u:p@[::1]:8443/", "socks5h://p:1080",
                 "http://p:000080"] {
        #expect(problem(good) == nil, "\(good)")
    }
    #expect(problem("http://127.0.0.1:99999")
            == "'http://127.0.0.1:99999': port 99999 is out of range (a TCP port is 1...65535)")
    #expect(problem("http://u:secret@proxy:abc") == "'http://u:***@proxy:abc': port 'abc' is not a number")
    #expect(problem("http://proxy:0")?.contains("out of range") == true)
    #expect(problem("ftp://proxy:21")
            == "'ftp://proxy:21': ftp: is not a proxy scheme libcurl has "
            + "(http, https, socks4, socks4a, socks5, socks5h)")
    #expect(problem("http://:3128") == "'http://:3128' has no host")
    #expect(problem("http://[::1") == "'http://[::1': the IPv6 address has no closing ']'")
    // A password with a character RFC 3986 does not allow there is named, never quoted.
    for value in ["http://u:pa/ssPW@proxy:3128", "http://u:pa ssPW@proxy:3128", "u:p\"wPW@proxy:3128",
                  "http://u:p?wPW@proxy:3128"] {
        let reason = problem(value)
        #expect(reason?.contains("percent-encode it (not shown") == true && reason?.contains("PW") == false,
                "\(String(describing: reason))")
    }
    #expect(problem("http://127.0.0.1:") == "'http://127.0.0.1:': no port after the ':' (libcurl would use 1080)")
    #expect(problem("http://u:p%2Fw@proxy:3128") == nil)
    let both = ProxyChoice(option: nil, environment: ["all_proxy": "http://p:abc"])
    #expect(both.unusable.count == 1, "one proxy for both schemes is named once")
}

@Test func noProxyNamesHostsDomainsAndAddressRanges() {
    #expect(ProxyChoice.excludes("*", host: "anything.example"))
    #expect(ProxyChoice.excludes("localhost, .lan", host: "signs.lan"))
    #expect(ProxyChoice.excludes("example.com", host: "www.EXAMPLE.com."))
    #expect(!ProxyChoice.excludes("example.com", host: "nonexample.com"))
    #expect(ProxyChoice.excludes("10.0.0.0/8 192.168.1.7", host: "10.20.30.40"))
    #expect(ProxyChoice.excludes("10.0.0.0/8,192.168.1.7", host: "192.168.1.7"))
    #expect(!ProxyChoice.excludes("192.168.1.7", host: "192.168.1.8"))
    #expect(ProxyChoice.excludes("fd00::/8", host: "[fd12::1]"))
    #expect(!ProxyChoice.excludes("::1", host: "[::2]"))
    #expect(!ProxyChoice.excludes("", host: "a.example"))
    // Lengths libcurl reads with atoi into an unsigned: negative or overflowing ones match
    // nothing (and do not stop the program), text that is no number means the address alone.
    #expect(!ProxyChoice.excludes("127.0.0.1/-1", host: "127.0.0.1"))
    #expect(!ProxyChoice.excludes("localhost,10.0.0.0/-8", host: "10.1.2.3"))
    #expect(!ProxyChoice.excludes("127.0.0.1/99999999999999999999", host: "127.0.0.1"))
    #expect(!ProxyChoice.excludes("::1/-1", host: "[::1]"))
    #expect(ProxyChoice.excludes("127.0.0.1/x", host: "127.0.0.1"))
}
