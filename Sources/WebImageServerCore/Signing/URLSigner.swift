import Crypto
import Foundation

/// Signs and checks image URLs: `sig` is the lowercase hex HMAC-SHA256, under a secret key, of the
/// canonical query (`QueryString.canonical`: every parameter but `sig`, sorted, RFC 3986-escaped), as
/// imgproxy and thumbor sign theirs.
///
/// ```swift
/// let signer = try URLSigner(key: Array("a secret of 16+ bytes".utf8))
/// let query = signer.signedQuery([("url", "https://images.example/a.jpg"), ("w", "400"), ("h", "300")])
/// // "h=300&url=https%3A%2F%2Fimages.example%2Fa.jpg&w=400&sig=…"
/// ```
///
/// - Important: A value type; thread-safe.
public struct URLSigner: Sendable {
    // The bytes, not a `SymmetricKey` (not `Sendable` in swift-crypto 3); the key is made per signature.
    private let key: [UInt8]

    /// The fewest bytes a key may have: 16 (128 bits). Shorter keys are refused (`URLSignerError.keyTooShort`):
    /// HMAC is no stronger than its key, and a 2-byte key falls to a search of one signed URL in a fraction of a
    /// second.
    public static let minimumKeyLength = 16

    /// Makes a signer over `key`: at least `minimumKeyLength` (16) bytes; 32 random bytes recommended.
    ///
    /// - Throws: `URLSignerError.keyTooShort` for a key of fewer than 16 bytes.
    public init(key: [UInt8]) throws(URLSignerError) {
        guard key.count >= Self.minimumKeyLength else {
            throw .keyTooShort(bytes: key.count, minimum: Self.minimumKeyLength)
        }
        self.key = key
    }

    /// Makes a signer from a key written in hex (`--key`), as `keyBytes(hex:)` reads it.
    ///
    /// - Throws: `URLSignerError` when `hex` is not an even number of hex digits, or is under 16 bytes.
    public init(hexKey hex: String) throws(URLSignerError) {
        try self.init(key: try Self.keyBytes(hex: hex))
    }

    /// The bytes of a key written in hex: only the digits `0-9`, `a-f`, `A-F`, an even number of them, at least
    /// `minimumKeyLength` bytes (32 digits). Nothing else is taken: no sign (`+f` is not `0f`, as
    /// `UInt8(_:radix:)` would read it), no space, no `0x`.
    ///
    /// - Throws: `URLSignerError.notHex`, `.oddLength` or `.keyTooShort`.
    public static func keyBytes(hex: String) throws(URLSignerError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        var digits = 0
        for (offset, character) in hex.unicodeScalars.enumerated() {
            guard let value = Self.hexValue(character) else { throw .notHex(offset: offset) }
            digits += 1
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        guard high == nil else { throw .oddLength(digits: digits) }
        guard bytes.count >= minimumKeyLength else { throw .keyTooShort(bytes: bytes.count, minimum: minimumKeyLength) }
        return bytes
    }

    private static func hexValue(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: return UInt8(scalar.value - 0x30)
        case 0x41...0x46: return UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(scalar.value - 0x61 + 10)
        default: return nil
        }
    }

    /// The signature of `pairs` (their canonical query; any `sig` among them is ignored).
    public func signature(of pairs: [(name: String, value: String)]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(QueryString.canonical(pairs).utf8), using: SymmetricKey(data: key))
        return mac.map { String(format: "%02x", $0) }.joined()
    }

    /// The canonical query of `pairs` followed by `&sig=…`: a query string ready for `/image?`.
    public func signedQuery(_ pairs: [(name: String, value: String)]) -> String {
        "\(QueryString.canonical(pairs))&sig=\(signature(of: pairs))"
    }

    /// Whether `signature` (hex, either case) is the signature of `pairs`, compared in constant time.
    public func isValid(_ signature: String, for pairs: [(name: String, value: String)]) -> Bool {
        let expected = Array(self.signature(of: pairs).utf8)
        let given = Array(signature.lowercased().utf8)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(expected, given) { difference |= a ^ b }
        return difference == 0
    }
}
