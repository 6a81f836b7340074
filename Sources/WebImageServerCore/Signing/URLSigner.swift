import Crypto
import Foundation

/// Signs and checks image URLs: `sig` is the lowercase hex HMAC-SHA256, under a secret key, of the
/// canonical query (`QueryString.canonical`: every parameter but `sig`, sorted, RFC 3986-escaped), as
/// imgproxy and thumbor sign theirs.
///
/// ```swift
/// let signer = URLSigner(key: Array("secret".utf8))
/// let query = signer.signedQuery([("url", "https://images.example/a.jpg"), ("w", "400"), ("h", "300")])
/// // "h=300&url=https%3A%2F%2Fimages.example%2Fa.jpg&w=400&sig=…"
/// ```
///
/// - Important: A value type; thread-safe.
public struct URLSigner: Sendable {
    // The bytes, not a `SymmetricKey` (not `Sendable` in swift-crypto 3); the key is made per signature.
    private let key: [UInt8]

    /// Makes a signer over `key` (any length; 32 random bytes recommended).
    public init(key: [UInt8]) {
        self.key = key
    }

    /// Makes a signer from a key written in hex (`--key`), or `nil` when `hex` is not a key (`keyBytes(hex:)`).
    public init?(hexKey hex: String) {
        guard let bytes = Self.keyBytes(hex: hex) else { return nil }
        self.init(key: bytes)
    }

    /// The bytes of a key written in hex, or `nil` when `hex` is empty or not an even number of hex digits.
    public static func keyBytes(hex: String) -> [UInt8]? {
        guard !hex.isEmpty, hex.utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
                  let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
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
