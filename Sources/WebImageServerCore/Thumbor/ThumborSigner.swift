import Crypto
import Foundation

/// Signs and checks thumbor URLs exactly as thumbor does (`libthumbor`'s `base64_hmac_sha1`): the signature is
/// the URL-safe base64 (with `=` padding) of the HMAC-SHA1, under a key, of the path after the signature, as
/// sent (still percent-encoded). Any of several keys may match, so keys rotate without downtime.
///
/// ```swift
/// let signer = try ThumborSigner(keys: [Array("a thumbor key of 16+ bytes".utf8)])
/// let path = "300x200/smart/images.example/a.jpg"
/// let url = "/\(signer.signature(of: path))/\(path)"
/// ```
///
/// - Important: A value type; thread-safe.
public struct ThumborSigner: Sendable {
    private let keys: [[UInt8]]

    /// Makes a signer over `keys` (thumbor's `SECURITY_KEY`, its UTF-8 bytes), each at least
    /// `URLSigner.minimumKeyLength` (16) bytes; the first one signs.
    ///
    /// - Throws: `URLSignerError.keyTooShort` for a shorter key (thumbor's sample key `MY_SECURE_KEY` among them).
    public init(keys: [[UInt8]]) throws(URLSignerError) {
        for key in keys where key.count < URLSigner.minimumKeyLength {
            throw .keyTooShort(bytes: key.count, minimum: URLSigner.minimumKeyLength)
        }
        self.keys = keys
    }

    /// The signature of `path` (the part after `/SIGNATURE/`) under the first key, as thumbor writes it.
    public func signature(of path: String) -> String {
        Self.signature(of: path, key: keys.first ?? [])
    }

    static func signature(of path: String, key: [UInt8]) -> String {
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(path.utf8), using: SymmetricKey(data: key))
        return Data(mac).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }

    /// Whether `signature` is the signature of `path` under any key. Every key is tried (in constant time per
    /// key), whichever matches, so the time does not tell which one did.
    public func isValid(_ signature: String, for path: String) -> Bool {
        let given = Array(signature.utf8)
        var matched = false
        for key in keys {
            let expected = Array(Self.signature(of: path, key: key).utf8)
            guard expected.count == given.count else { continue }
            var difference: UInt8 = 0
            for (a, b) in zip(expected, given) { difference |= a ^ b }
            matched = matched || difference == 0
        }
        return matched
    }
}
