import Foundation

/// A throwaway certificate authority made with the `openssl` command: a CA, a server certificate it signed for
/// `localhost` and `127.0.0.1` (subjectAltName), and a client certificate it signed, for mutual TLS. What a
/// company's private CA looks like to a client, without a TLS library linked into the tests.
///
/// - Important: Not thread-safe; one owner. `make test-deps` installs `openssl`.
public struct PrivateCA {
    /// The CA certificate (PEM): what a client trusts.
    public let caCertificatePath: String
    /// The server's certificate and key (PEM), signed by the CA.
    public let serverCertificatePath: String
    public let serverKeyPath: String
    /// A client certificate and key (PEM), signed by the CA.
    public let clientCertificatePath: String
    public let clientKeyPath: String
    /// The base64 SHA-256 of the server key's SubjectPublicKeyInfo (what `CURLOPT_PINNEDPUBLICKEY` pins).
    public let serverPublicKeyHash: String

    /// Makes the CA and both certificates in `directory` (valid for one day).
    public static func make(in directory: URL) throws -> PrivateCA {
        guard let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(where: FileManager.default.isExecutableFile) else {
            throw SelfSignedCertificate.Unavailable(description: "openssl not found (install it with `make test-deps`)")
        }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(openssl, ["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "1",
                                                    "-subj", "/CN=WebImage Test CA"])
        for (name, extensions) in [("server", "subjectAltName=DNS:localhost,IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")] {
            try run(openssl, ["req"] + ec + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"),
                                             "-subj", "/CN=\(name)"])
            try extensions.write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try run(openssl, ["x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                              "-CAcreateserial", "-out", path("\(name).pem"), "-days", "1", "-extfile", path("\(name).ext")])
        }
        try run(openssl, ["pkey", "-in", path("server.key"), "-pubout", "-outform", "DER", "-out", path("server.spki")])
        try run(openssl, ["dgst", "-sha256", "-binary", "-out", path("server.spki.sha256"), path("server.spki")])
        let hash = try Data(contentsOf: URL(fileURLWithPath: path("server.spki.sha256"))).base64EncodedString()
        return PrivateCA(caCertificatePath: path("ca.pem"), serverCertificatePath: path("server.pem"),
                         serverKeyPath: path("server.key"), clientCertificatePath: path("client.pem"),
                         clientKeyPath: path("client.key"), serverPublicKeyHash: hash)
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SelfSignedCertificate.Unavailable(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed")
        }
    }
}
