import Foundation

/// Independent reference decodes made at test time by command-line decoders (ImageMagick `convert`,
/// `djpeg`, `dwebp`), to compare ImageCodec's pixels against.
///
/// Each call returns `nil` when the tool is not installed, so a test can `XCTSkip` with a clear message.
/// Pixels come back as straight-alpha RGBA8, packed rows.
public enum ReferenceDecoder {
    /// A decoded raster: packed straight RGBA8.
    public struct Raster: Sendable, Equatable {
        public let width: Int
        public let height: Int
        public let rgba: [UInt8]
        public init(width: Int, height: Int, rgba: [UInt8]) {
            self.width = width; self.height = height; self.rgba = rgba
        }
    }

    /// An external tool failed or printed something unexpected.
    public struct ToolError: Error, CustomStringConvertible {
        public let description: String
    }

    /// The full path of `tool` on `PATH`, or `nil`.
    public static func path(of tool: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        for dir in dirs {
            let candidate = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `tool` with `arguments` and returns its standard output; throws on a non-zero exit.
    public static func run(_ tool: String, _ arguments: [String]) throws -> Data {
        guard let executable = path(of: tool) else { throw ToolError(description: "\(tool) is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read both pipes to the end before waiting, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolError(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                + String(decoding: errData.prefix(500), as: UTF8.self))
        }
        return data
    }

    /// Every frame of `url`, coalesced onto the canvas (animations composited as browsers show them), via
    /// ImageMagick. `nil` when `convert` is not installed.
    public static func imageMagickFrames(_ url: URL) throws -> [Raster]? {
        guard path(of: "convert") != nil else { return nil }
        let sizes = String(decoding: try run("convert", [url.path, "-coalesce", "-format", "%w %h\n", "info:"]), as: UTF8.self)
            .split(separator: "\n").map { $0.split(separator: " ").compactMap { Int($0) } }
        let raw = try run("convert", [url.path, "-coalesce", "-depth", "8", "RGBA:-"])
        var frames: [Raster] = []
        var offset = 0
        for size in sizes where size.count == 2 {
            let count = size[0] * size[1] * 4
            guard offset + count <= raw.count else { throw ToolError(description: "convert printed too few bytes") }
            frames.append(Raster(width: size[0], height: size[1], rgba: [UInt8](raw[offset..<offset + count])))
            offset += count
        }
        return frames
    }

    /// The first frame of `url` decoded by ImageMagick with its pixels as stored: `-set colorspace sRGB` stops
    /// ImageMagick from converting images it considers linear (a PNG with gAMA 1.0) on output. One process
    /// per call (the size is given, not asked). `nil` when `convert` is not installed.
    public static func imageMagickPixelsAsStored(_ url: URL, width: Int, height: Int) throws -> Raster? {
        guard path(of: "convert") != nil else { return nil }
        let raw = try run("convert", [url.path + "[0]", "-set", "colorspace", "sRGB", "-depth", "8", "RGBA:-"])
        guard raw.count == width * height * 4 else {
            throw ToolError(description: "convert printed \(raw.count) bytes for \(width)×\(height)")
        }
        return Raster(width: width, height: height, rgba: [UInt8](raw))
    }

    /// Like `imageMagickPixelsAsStored(_:width:height:)` for many files in one `convert` process (much faster
    /// than one process per file). Throws when ImageMagick refuses any of them; decode those one by one.
    public static func imageMagickPixelsAsStored(_ files: [(url: URL, width: Int, height: Int)]) throws -> [Raster]? {
        guard path(of: "convert") != nil else { return nil }
        guard !files.isEmpty else { return [] }
        let raw = try run("convert", files.map { $0.url.path + "[0]" } + ["-set", "colorspace", "sRGB", "-depth", "8", "RGBA:-"])
        var rasters: [Raster] = []
        var offset = raw.startIndex
        for file in files {
            let count = file.width * file.height * 4
            guard raw.endIndex - offset >= count else { throw ToolError(description: "convert printed too few bytes") }
            rasters.append(Raster(width: file.width, height: file.height, rgba: [UInt8](raw[offset..<(offset + count)])))
            offset += count
        }
        guard offset == raw.endIndex else { throw ToolError(description: "convert printed extra bytes") }
        return rasters
    }

    /// A JPEG decoded by `djpeg` (libjpeg-turbo's own tool), as opaque RGBA. `nil` when not installed.
    public static func djpeg(_ url: URL) throws -> Raster? {
        guard path(of: "djpeg") != nil else { return nil }
        return try parseNetpbm(try run("djpeg", ["-pnm", url.path]))
    }

    /// A WebP decoded by `dwebp` (libwebp's own tool), as RGBA. `nil` when not installed.
    public static func dwebp(_ url: URL) throws -> Raster? {
        guard path(of: "dwebp") != nil else { return nil }
        return try parseNetpbm(try run("dwebp", ["-quiet", "-pam", url.path, "-o", "-"]))
    }

    /// Parses binary PGM (P5), PPM (P6) or PAM (P7, RGB_ALPHA/RGB/GRAYSCALE) into RGBA.
    public static func parseNetpbm(_ data: Data) throws -> Raster {
        let bytes = [UInt8](data)
        var index = 0
        func token() -> String {
            while index < bytes.count {
                if bytes[index] == UInt8(ascii: "#") { while index < bytes.count && bytes[index] != 10 { index += 1 } }
                else if bytes[index] == 32 || bytes[index] == 10 || bytes[index] == 13 || bytes[index] == 9 { index += 1 }
                else { break }
            }
            let start = index
            while index < bytes.count, ![32, 10, 13, 9].contains(bytes[index]) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        let magic = token()
        var width = 0, height = 0, depth = 0, maxval = 0
        switch magic {
        case "P5", "P6":
            width = Int(token()) ?? 0; height = Int(token()) ?? 0; maxval = Int(token()) ?? 0
            depth = magic == "P5" ? 1 : 3
            index += 1
        case "P7":
            while index < bytes.count {
                let key = token()
                if key == "ENDHDR" { index += 1; break }
                let value = token()
                switch key {
                case "WIDTH": width = Int(value) ?? 0
                case "HEIGHT": height = Int(value) ?? 0
                case "DEPTH": depth = Int(value) ?? 0
                case "MAXVAL": maxval = Int(value) ?? 0
                default: break
                }
            }
        default: throw ToolError(description: "not a netpbm image (magic \(magic))")
        }
        guard width > 0, height > 0, maxval == 255, [1, 2, 3, 4].contains(depth),
              bytes.count - index >= width * height * depth else {
            throw ToolError(description: "unsupported netpbm header \(magic) \(width)×\(height) depth \(depth) maxval \(maxval)")
        }
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for p in 0..<(width * height) {
            let s = index + p * depth
            switch depth {
            case 1: rgba[p * 4] = bytes[s]; rgba[p * 4 + 1] = bytes[s]; rgba[p * 4 + 2] = bytes[s]
            case 2: rgba[p * 4] = bytes[s]; rgba[p * 4 + 1] = bytes[s]; rgba[p * 4 + 2] = bytes[s]; rgba[p * 4 + 3] = bytes[s + 1]
            default:
                rgba[p * 4] = bytes[s]; rgba[p * 4 + 1] = bytes[s + 1]; rgba[p * 4 + 2] = bytes[s + 2]
                if depth == 4 { rgba[p * 4 + 3] = bytes[s + 3] }
            }
        }
        return Raster(width: width, height: height, rgba: rgba)
    }

    /// Peak signal-to-noise ratio in dB between two equally sized byte arrays (∞ when identical).
    public static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count && !a.isEmpty, "psnr needs equal, non-empty inputs")
        var sum = 0.0
        for i in a.indices {
            let d = Double(Int(a[i]) - Int(b[i]))
            sum += d * d
        }
        if sum == 0 { return .infinity }
        return 10 * log10(255 * 255 / (sum / Double(a.count)))
    }

    /// The largest absolute per-channel difference between two equally sized byte arrays.
    public static func maxDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        precondition(a.count == b.count, "maxDifference needs equal sizes")
        var m = 0
        for i in a.indices { m = max(m, abs(Int(a[i]) - Int(b[i]))) }
        return m
    }
}
