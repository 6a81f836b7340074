/// Why an address is not public: the ranges a `SourcePolicy.publicOnly` refuses.
///
/// A value type; Sendable.
public enum AddressCategory: String, Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// `0.0.0.0/8` ("this network"; Linux connects `0.0.0.0` to the local host), `::`.
    case unspecified
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), unique local `fc00::/7`, deprecated site-local `fec0::/10`.
    case privateUse = "private"
    /// `169.254.0.0/16` (cloud metadata services live at 169.254.169.254), `fe80::/10`.
    case linkLocal = "link-local"
    /// Carrier-grade NAT, RFC 6598: `100.64.0.0/10`.
    case sharedAddressSpace = "shared (CGNAT)"
    /// `224.0.0.0/4`, `ff00::/8`.
    case multicast
    /// `240.0.0.0/4` (reserved for future use), except the broadcast address.
    case reserved
    /// `255.255.255.255`.
    case broadcast

    /// The category's name (`"loopback"`, `"private"`, `"link-local"`, …).
    public var description: String { rawValue }
}

extension IPAddress {
    /// How an IPv6 address can carry an IPv4 address (the policy decides on the IPv4 address inside).
    public enum IPv4Embedding: String, Sendable, Hashable {
        /// IPv4-mapped `::ffff:0:0/96`.
        case mapped
        /// IPv4-compatible `::/96` (deprecated; `::` and `::1` excepted).
        case compatible
        /// NAT64 `64:ff9b::/96` (RFC 6052).
        case nat64
        /// 6to4 `2002::/16`: the IPv4 address in bits 16…47.
        case sixToFour = "6to4"
        /// Teredo `2001::/32`: the server's IPv4 in bits 32…63, the client's (inverted) in the last 32 bits.
        case teredo
    }

    /// The IPv4 addresses an IPv6 address wraps, with how; empty for IPv4 and for plain IPv6 addresses.
    /// Teredo yields two: the client (the host the packets reach), then the server.
    public var embeddedIPv4: (embedding: IPv4Embedding, addresses: [IPAddress])? {
        guard case .v6(let value) = self else { return nil }
        let low32 = IPAddress.v4(UInt32(truncatingIfNeeded: value))
        if value >> 32 == 0xFFFF { return (.mapped, [low32]) }
        if value >> 32 == 0, value > 1 { return (.compatible, [low32]) }
        if value >> 32 == 0x0064_FF9B << 64 { return (.nat64, [low32]) }
        if value >> 112 == 0x2002 { return (.sixToFour, [.v4(UInt32(truncatingIfNeeded: value >> 80))]) }
        if value >> 96 == 0x2001_0000 {
            return (.teredo, [.v4(~UInt32(truncatingIfNeeded: value)), .v4(UInt32(truncatingIfNeeded: value >> 64))])
        }
        return nil
    }

    /// The category that makes this address non-public, or nil for a public address. An IPv6 address that
    /// wraps an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) takes the category of the IPv4 address
    /// inside (for Teredo, of the first non-public of client and server). Pure; O(1).
    public var category: AddressCategory? {
        switch self {
        case .v4(let value): return Self.category(v4: value)
        case .v6(let value):
            if value == 0 { return .unspecified }
            if value == 1 { return .loopback }
            if let (_, inner) = embeddedIPv4 { return inner.lazy.compactMap(\.category).first }
            if value >> 121 == 0x7E { return .privateUse }      // fc00::/7
            if value >> 118 == 0x3FB { return .privateUse }     // fec0::/10 (site-local, deprecated)
            if value >> 118 == 0x3FA { return .linkLocal }      // fe80::/10
            if value >> 120 == 0xFF { return .multicast }       // ff00::/8
            return nil
        }
    }

    /// Whether a public-only policy lets a transfer connect here (no category).
    public var isPublic: Bool { category == nil }

    private static func category(v4 value: UInt32) -> AddressCategory? {
        func isIn(_ network: UInt32, _ length: Int) -> Bool { value >> (32 - length) == network >> (32 - length) }
        if isIn(0x0000_0000, 8) { return .unspecified }           // 0.0.0.0/8
        if isIn(0x7F00_0000, 8) { return .loopback }              // 127.0.0.0/8
        if isIn(0x0A00_0000, 8) || isIn(0xAC10_0000, 12) || isIn(0xC0A8_0000, 16) { return .privateUse }
        if isIn(0xA9FE_0000, 16) { return .linkLocal }            // 169.254.0.0/16
        if isIn(0x6440_0000, 10) { return .sharedAddressSpace }   // 100.64.0.0/10
        if isIn(0xE000_0000, 4) { return .multicast }             // 224.0.0.0/4
        if value == 0xFFFF_FFFF { return .broadcast }
        if isIn(0xF000_0000, 4) { return .reserved }              // 240.0.0.0/4
        return nil
    }
}
