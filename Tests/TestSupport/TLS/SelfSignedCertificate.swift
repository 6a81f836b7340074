import Foundation

/// A throwaway EC certificate and key for `localhost`, made with the `openssl` command in a folder the caller
/// owns (the TLS test servers use it; no TLS library is linked into the tests).
///
/// - Important: Not thread-safe; one owner. `make test-deps` installs `openssl`.
public struct SelfSignedCertificate {
    /// Thrown when `openssl` is missing or fails; the message says why.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The `openssl` executable.
    public let openssl: String
    /// PEM certificate path.
    public let certificatePath: String
    /// PEM private key path.
    public let keyPath: String

    /// Generates `cert.pem` and `key.pem` in `directory` (valid for one day).
    public static func make(in directory: URL) throws -> SelfSignedCertificate {
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile) else {
            throw Unavailable(description: "openssl not found (install it with `make test-deps`)")
        }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let generate = Process()
        generate.executableURL = URL(fileURLWithPath: openssl)
        generate.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                              "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"]
        generate.standardOutput = FileHandle.nullDevice
        generate.standardError = FileHandle.nullDevice
        try generate.run()
        generate.waitUntilExit()
        guard generate.terminationStatus == 0 else {
            throw Unavailable(description: "openssl req failed with status \(generate.terminationStatus)")
        }
        return SelfSignedCertificate(openssl: openssl, certificatePath: cert, keyPath: key)
    }
}
