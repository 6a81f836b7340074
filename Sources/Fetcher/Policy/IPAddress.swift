import Foundation

/// An IPv4 or IPv6 address, as the fetcher's source policy sees the address a transfer connects to.
///
///     IPAddress("::ffff:127.0.0.1")  // .v6, wrapping 127.0.0.1
///     IPAddress("10.0.0.1")?.category  // .privateUse
///
/// A value type; Sendable.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address, most significant byte first (`127.0.0.1` is `0x7F00_0001`).
    case v4(UInt32)
    /// An IPv6 address, most significant byte first.
    case v6(UInt128)

    /// Parses dotted IPv4 (`192.0.2.1`) or IPv6 text (`2001:db8::1`, `::ffff:10.0.0.1`, with or without
    /// brackets); nil for anything else (host names included). Wraps `inet_pton`.
    public init?(_ text: String) {
        var trimmed = Substring(text)
        if trimmed.hasPrefix("["), trimmed.hasSuffix("]") { trimmed = trimmed.dropFirst().dropLast() }
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, String(trimmed), &bytes) == 1 {
            self.init(bytes: bytes[0..<4])
        } else if inet_pton(AF_INET6, String(trimmed), &bytes) == 1 {
            self.init(bytes: bytes[0..<16])
        } else {
            return nil
        }
    }

    /// The address in 4 (IPv4) or 16 (IPv6) bytes in network order; nil for any other length.
    public init?(bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 4: self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16: self = .v6(bytes.reduce(0) { $0 << 8 | UInt128($1) })
        default: return nil
        }
    }

    /// The address in network byte order (4 or 16 bytes).
    public var bytes: [UInt8] {
        switch self {
        case .v4(let value): return (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
        case .v6(let value): return (0..<16).map { UInt8(truncatingIfNeeded: value >> (120 - 8 * $0)) }
        }
    }

    /// The canonical text (`inet_ntop`): `127.0.0.1`, `::ffff:127.0.0.1`, `2001:db8::1`.
    public var description: String {
        var input = bytes
        var output = [CChar](repeating: 0, count: 64)
        let family = input.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &input, &output, socklen_t(output.count)) != nil else { return "?" }
        return String(decoding: output.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses in CIDR notation (`10.0.0.0/8`, `fd00::/8`, a single `127.0.0.1`), for the source
/// policy's allow-list.
///
/// A value type; Sendable.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block (host bits cleared).
    public let address: IPAddress
    /// The prefix length: 0…32 for IPv4, 0…128 for IPv6.
    public let prefixLength: Int

    /// Parses `address/prefix` or a bare address (the full prefix); nil when malformed.
    public init?(_ cidr: String) {
        let parts = cidr.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let width = address.bitWidth
        var length = width
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...width).contains(parsed) else { return nil }
            length = parsed
        }
        self.init(address: address, prefixLength: length)
    }

    /// The block of `prefixLength` leading bits of `address` (clamped to the address width).
    public init(address: IPAddress, prefixLength: Int) {
        let length = min(max(0, prefixLength), address.bitWidth)
        self.prefixLength = length
        switch address {
        case .v4(let value): self.address = .v4(length == 0 ? 0 : value & ~UInt32(0) << (32 - length))
        case .v6(let value): self.address = .v6(length == 0 ? 0 : value & ~UInt128(0) << (128 - length))
        }
    }

    /// Whether `candidate` is in the block (an IPv4 address is never in an IPv6 block, nor the reverse).
    public func contains(_ candidate: IPAddress) -> Bool {
        IPNetwork(address: candidate, prefixLength: prefixLength).address == address
            && candidate.bitWidth == address.bitWidth
    }

    /// `address/prefixLength`.
    public var description: String { "\(address)/\(prefixLength)" }
}

extension IPAddress {
    /// 32 or 128.
    var bitWidth: Int {
        if case .v4 = self { return 32 }
        return 128
    }
}
