/// How a transfer trusts the server and identifies itself over TLS: a private CA, pinned public keys, a
/// client certificate. Each maps to one libcurl option; the defaults change nothing (the system's CAs, no
/// pinning, no client certificate).
///
///     var tls = TLSOptions()
///     tls.caBundlePath = "/etc/myservice/ca.pem"                 // trust our own CA (and only it)
///     tls.pinnedPublicKeyHashes = ["d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM="]
///     manager.tls = tls
///
/// A value type; Sendable.
public struct TLSOptions: Sendable, Hashable {
    /// A PEM file of CA certificates trusted instead of the system's (`CURLOPT_CAINFO`): a private CA, a
    /// self-signed origin. None by default.
    public var caBundlePath: String?
    /// A folder of CA certificates named by their hashes (`openssl rehash`), trusted instead of the system's
    /// (`CURLOPT_CAPATH`). None by default.
    public var caDirectoryPath: String?
    /// SHA-256 hashes (base64) of the public keys (SubjectPublicKeyInfo) the server's certificate may have
    /// (`CURLOPT_PINNEDPUBLICKEY` as `sha256//…;sha256//…`); a certificate with another key fails with
    /// `FetchError.tlsFailure` before any request byte. Checked even with `allowsInvalidCertificates`. Empty
    /// (no pinning) by default; an entry that is not the base64 of 32 bytes pins a key no server has (the
    /// transfer fails with `tlsFailure`) rather than pin nothing.
    public var pinnedPublicKeyHashes: [String]
    /// A PEM client certificate for mutual TLS (`CURLOPT_SSLCERT`). None by default.
    public var clientCertificatePath: String?
    /// The PEM private key of `clientCertificatePath` (`CURLOPT_SSLKEY`); none when the certificate file holds
    /// it. None by default.
    public var clientKeyPath: String?
    /// The passphrase of `clientKeyPath` (`CURLOPT_KEYPASSWD`). None by default.
    public var clientKeyPassphrase: String?

    /// Options that change nothing: the system's CAs, no pinning, no client certificate.
    public init(caBundlePath: String? = nil, caDirectoryPath: String? = nil, pinnedPublicKeyHashes: [String] = [],
                clientCertificatePath: String? = nil, clientKeyPath: String? = nil, clientKeyPassphrase: String? = nil) {
        self.caBundlePath = caBundlePath
        self.caDirectoryPath = caDirectoryPath
        self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
        self.clientKeyPassphrase = clientKeyPassphrase
    }

    /// The `CURLOPT_PINNEDPUBLICKEY` value, or nil without pins. A hash that is not base64 of 32 bytes is
    /// written as an impossible pin, so a typo never pins nothing.
    var pinnedPublicKeyOption: String? {
        guard !pinnedPublicKeyHashes.isEmpty else { return nil }
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        return pinnedPublicKeyHashes.map { hash in
            let valid = hash.count == 44 && hash.allSatisfy(base64.contains)
            return "sha256//" + (valid ? hash : String(repeating: "A", count: 43) + "=")
        }.joined(separator: ";")
    }
}
