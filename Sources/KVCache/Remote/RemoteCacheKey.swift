/// Turns any cache key into a key a remote tier accepts: a versioned namespace plus a hash of the key.
///
/// memcached keys are at most 250 bytes of printable ASCII without spaces; cache keys are any strings (URLs
/// with spaces, newlines, non-ASCII, any length). The remote key is `<namespace>:v<version>:<md5 hex>` — at
/// most 64 + 12 + 33 bytes, only `[A-Za-z0-9._-:]`. Bump `version` when the stored format changes: old
/// entries are then simply never read again and expire. The hash is not a security boundary (values carry
/// their full key and a reader checks it, so a collision is a miss, never a wrong image).
///
/// - Important: A value type; thread-safe.
public struct RemoteCacheKey: Sendable, Hashable {
    /// The namespace (`[A-Za-z0-9._-]`, 1…64 characters). Default `webimage`.
    public let namespace: String
    /// The format version. Default 1.
    public let version: Int
    /// `<namespace>:v<version>:`, made once.
    private let prefix: String

    /// Makes a key scheme; `nil` when `namespace` is empty, longer than 64 or has other characters than
    /// letters, digits, `.`, `_` and `-`, or `version` is negative.
    public init?(namespace: String = "webimage", version: Int = 1) {
        let allowed = namespace.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
        guard allowed, !namespace.isEmpty, namespace.utf8.count <= 64, version >= 0 else { return nil }
        self.init(validNamespace: namespace, version: version)
    }

    /// `webimage`, version 1: the scheme `ImageCache` and `MemcachedTier` use by default.
    public static let standard = RemoteCacheKey(validNamespace: "webimage", version: 1)

    private init(validNamespace: String, version: Int) {
        namespace = validNamespace
        self.version = version
        prefix = "\(validNamespace):v\(version):"
    }

    /// The remote key of `key` (its UTF-8 bytes hashed), built in one allocation.
    public func remoteKey(for key: String) -> String {
        var prefix = prefix
        let length = prefix.utf8.count + 32
        return prefix.withUTF8 { head in
            String(unsafeUninitializedCapacity: length) { buffer in
                let out = UnsafeMutableRawBufferPointer(buffer)
                out.copyMemory(from: UnsafeRawBufferPointer(head))
                MD5.writeHex(of: key, into: UnsafeMutableRawBufferPointer(rebasing: out[head.count...]))
                return length
            }
        }
    }
}
