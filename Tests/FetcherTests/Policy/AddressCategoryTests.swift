import Fetcher
import XCTest

/// The address classifier of `SourcePolicy.publicOnly`: every refused range, its first and last address, and
/// the addresses one past each end (which must be public, or in the neighbouring range named).
final class AddressCategoryTests: XCTestCase {
    private func category(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> AddressCategory? {
        guard let address = IPAddress(text) else {
            XCTFail("\(text) does not parse", file: file, line: line)
            return nil
        }
        return address.category
    }

    /// (first, last, category, one below, one above) for each IPv4 range; nil category = public.
    private let ipv4Ranges: [(String, String, AddressCategory, String?, String?)] = [
        ("0.0.0.0", "0.255.255.255", .unspecified, nil, "1.0.0.0"),
        ("10.0.0.0", "10.255.255.255", .privateUse, "9.255.255.255", "11.0.0.0"),
        ("100.64.0.0", "100.127.255.255", .sharedAddressSpace, "100.63.255.255", "100.128.0.0"),
        ("127.0.0.0", "127.255.255.255", .loopback, "126.255.255.255", "128.0.0.0"),
        ("169.254.0.0", "169.254.255.255", .linkLocal, "169.253.255.255", "169.255.0.0"),
        ("172.16.0.0", "172.31.255.255", .privateUse, "172.15.255.255", "172.32.0.0"),
        ("192.168.0.0", "192.168.255.255", .privateUse, "192.167.255.255", "192.169.0.0"),
        ("224.0.0.0", "239.255.255.255", .multicast, "223.255.255.255", nil),
        ("240.0.0.0", "255.255.255.254", .reserved, nil, nil),
    ]

    func testIPv4RangesAndTheirEdges() {
        for (first, last, expected, below, above) in ipv4Ranges {
            XCTAssertEqual(category(first), expected, first)
            XCTAssertEqual(category(last), expected, last)
            if let below { XCTAssertNil(category(below), "\(below) is public") }
            if let above { XCTAssertNil(category(above), "\(above) is public") }
        }
        XCTAssertEqual(category("255.255.255.255"), .broadcast)
        XCTAssertEqual(category("169.254.169.254"), .linkLocal, "cloud metadata")
        XCTAssertEqual(category("239.255.255.255"), .multicast, "the multicast block ends where reserved starts")
        XCTAssertEqual(category("240.0.0.0"), .reserved)
        for address in ["1.1.1.1", "8.8.8.8", "93.184.216.34", "223.255.255.255"] {
            XCTAssertNil(category(address), address)
        }
    }

    func testIPv6Ranges() {
        XCTAssertEqual(category("::"), .unspecified)
        XCTAssertEqual(category("::1"), .loopback)
        XCTAssertEqual(category("fc00::"), .privateUse)
        XCTAssertEqual(category("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), .privateUse)
        XCTAssertNil(category("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), "one below fc00::/7")
        XCTAssertEqual(category("fe80::"), .linkLocal)
        XCTAssertEqual(category("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), .linkLocal)
        XCTAssertNil(category("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), "one below fe80::/10")
        XCTAssertEqual(category("fec0::"), .privateUse, "site-local (deprecated)")
        XCTAssertEqual(category("ff00::"), .multicast)
        XCTAssertEqual(category("ff02::1"), .multicast)
        XCTAssertNil(category("fe00::"), "between fc00::/7 and fe80::/10")
        XCTAssertNil(category("::1:0:0"), "one past ::/96 (IPv4-compatible)")
        XCTAssertNil(category("::1:0:0:0"), "one past ::ffff:0:0/96 (IPv4-mapped)")
        for address in ["2001:4860:4860::8888", "2606:4700:4700::1111", "2a00:1450::1"] {
            XCTAssertNil(category(address), address)
        }
    }

    func testIPv4WrappedInIPv6IsDecidedByTheIPv4Inside() {
        let cases: [(String, IPAddress.IPv4Embedding, AddressCategory?)] = [
            ("::ffff:127.0.0.1", .mapped, .loopback),
            ("::ffff:10.1.2.3", .mapped, .privateUse),
            ("::ffff:169.254.169.254", .mapped, .linkLocal),
            ("::ffff:0.0.0.0", .mapped, .unspecified),
            ("::ffff:8.8.8.8", .mapped, nil),
            ("::127.0.0.1", .compatible, .loopback),
            ("::0.0.0.2", .compatible, .unspecified),
            ("::8.8.8.8", .compatible, nil),
            ("64:ff9b::7f00:1", .nat64, .loopback),
            ("64:ff9b::a9fe:a9fe", .nat64, .linkLocal),
            ("64:ff9b::808:808", .nat64, nil),
            ("2002:7f00:1::", .sixToFour, .loopback),
            ("2002:c0a8:101::1", .sixToFour, .privateUse),
            ("2002:808:808::1", .sixToFour, nil),
            // Teredo: server 65.54.227.120, client 127.0.0.1 inverted (80ff:fffe).
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", .teredo, .loopback),
            // Teredo: server 10.0.0.1 (private), client 8.8.8.8 inverted (f7f7:f7f7).
            ("2001:0:a00:1:8000:63bf:f7f7:f7f7", .teredo, .privateUse),
            ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", .teredo, nil),
        ]
        for (text, embedding, expected) in cases {
            guard let address = IPAddress(text) else { XCTFail(text); continue }
            XCTAssertEqual(address.embeddedIPv4?.embedding, embedding, text)
            XCTAssertEqual(address.category, expected, text)
        }
        XCTAssertNil(IPAddress("2001:1::1")?.embeddedIPv4, "2001:1::/32 is past Teredo's 2001::/32")
        XCTAssertNil(IPAddress("2003::1")?.embeddedIPv4, "2003:: is past 6to4's 2002::/16")
        XCTAssertNil(IPAddress("64:ff9b:0:0:0:1::1")?.embeddedIPv4, "outside 64:ff9b::/96")
        XCTAssertNil(IPAddress("::fffe:7f00:1")?.embeddedIPv4, "one below ::ffff:0:0/96 is not mapped")
    }

    func testParsingAndPrinting() {
        XCTAssertEqual(IPAddress("127.0.0.1"), .v4(0x7F00_0001))
        XCTAssertEqual(IPAddress("[::1]"), .v6(1))
        XCTAssertEqual(IPAddress("::ffff:127.0.0.1")?.description, "::ffff:127.0.0.1")
        XCTAssertEqual(IPAddress("2001:DB8:0::1")?.description, "2001:db8::1")
        XCTAssertNil(IPAddress("localhost"))
        XCTAssertNil(IPAddress("256.0.0.1"))
        XCTAssertEqual(IPAddress(bytes: [10, 0, 0, 1]), IPAddress("10.0.0.1"))
        XCTAssertNil(IPAddress(bytes: [1, 2, 3]))
    }

    func testNetworksAndTheAllowList() throws {
        let network = try XCTUnwrap(IPNetwork("10.1.0.0/16"))
        XCTAssertTrue(network.contains(try XCTUnwrap(IPAddress("10.1.255.255"))))
        XCTAssertFalse(network.contains(try XCTUnwrap(IPAddress("10.2.0.0"))))
        XCTAssertFalse(network.contains(try XCTUnwrap(IPAddress("::ffff:10.1.0.1"))), "families differ")
        XCTAssertEqual(IPNetwork("10.1.2.3/8")?.description, "10.0.0.0/8", "host bits cleared")
        XCTAssertEqual(IPNetwork("fd00::1")?.prefixLength, 128)
        XCTAssertNil(IPNetwork("10.0.0.0/33"))
        XCTAssertNil(IPNetwork("example.com/8"))

        let policy = SourcePolicy.publicOnly(allowing: [network])
        XCTAssertNil(policy.refusal(for: try XCTUnwrap(IPAddress("10.1.2.3"))), "allowed by the list")
        XCTAssertNil(policy.refusal(for: try XCTUnwrap(IPAddress("::ffff:10.1.2.3"))), "the IPv4 inside is listed")
        XCTAssertEqual(policy.refusal(for: try XCTUnwrap(IPAddress("10.2.0.1"))), .privateUse)
        XCTAssertNil(policy.refusal(for: try XCTUnwrap(IPAddress("8.8.8.8"))))
        XCTAssertNil(SourcePolicy.allowAll.refusal(for: try XCTUnwrap(IPAddress("127.0.0.1"))))
        XCTAssertEqual(SourcePolicy.publicOnly.refusal(for: try XCTUnwrap(IPAddress("127.0.0.1"))), .loopback)
    }
}
