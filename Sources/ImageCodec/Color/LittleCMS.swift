internal import CWebImageLCMS
import Foundation

/// The process's Little CMS context and the profile checks the colour stage relies on.
///
/// One `cmsContext` is made on first use with an error handler that records lcms's complaints in `ColorLog`
/// (nothing is printed). It is never changed afterwards (no plug-ins), which is what lcms needs to share a
/// context between threads; profiles are opened per use and closed by the caller.
///
/// - Important: Thread-safe (immutable after the lazy initialisation).
enum LittleCMS {
    /// Largest ICC profile used: 4 MiB. Bigger ones are ignored (the image decodes as untagged).
    static let maxProfileBytes = 4 << 20

    /// The shared context (wraps `cmsCreateContext` + `cmsSetLogErrorHandlerTHR`).
    nonisolated(unsafe) static let context: cmsContext? = {
        let handler: cmsLogErrorHandlerFunction = { _, code, text in
            ColorLog.record("lcms error \(code): \(text.map { String(cString: $0) } ?? "")")
        }
        // The global context too: nothing lcms does may print to stderr.
        cmsSetLogErrorHandler(handler)
        let context = cmsCreateContext(nil, nil)
        cmsSetLogErrorHandlerTHR(context, handler)
        return context
    }()

    /// Why a profile cannot be used, for the debug log.
    struct Rejection: Error, CustomStringConvertible {
        var description: String
    }

    /// Opens an ICC profile after checking what lcms does not: size (132 B … 4 MiB), the `acsp` signature, a
    /// major version of 2 to 4 (ICC v5/iccMAX is refused) and the size of its lookup tables (`ProfileComplexity`). Wraps `cmsOpenProfileFromMemTHR`.
    /// The caller closes the profile (`cmsCloseProfile`).
    static func openProfile(_ bytes: Data) throws(Rejection) -> cmsHPROFILE {
        guard bytes.count >= 132 else { throw Rejection(description: "profile of \(bytes.count) bytes is too short") }
        guard bytes.count <= maxProfileBytes else {
            throw Rejection(description: "profile of \(bytes.count) bytes is over \(maxProfileBytes)")
        }
        let start = bytes.startIndex
        guard bytes[start + 36] == 0x61, bytes[start + 37] == 0x63, bytes[start + 38] == 0x73, bytes[start + 39] == 0x70 else {
            throw Rejection(description: "no 'acsp' signature")
        }
        let major = bytes[start + 8]
        guard (2...4).contains(major) else { throw Rejection(description: "ICC version \(major) is not supported") }
        // Bounded in time, not only in bytes: lookup tables whose transform would take lcms too long are refused.
        if let excess = ProfileComplexity.excess(bytes) { throw Rejection(description: "too complex: \(excess)") }
        let profile = bytes.withUnsafeBytes { cmsOpenProfileFromMemTHR(context, $0.baseAddress, cmsUInt32Number($0.count)) }
        guard let profile else { throw Rejection(description: "lcms could not read the profile") }
        let deviceClass = cmsGetDeviceClass(profile)
        if deviceClass == cmsSigLinkClass || deviceClass == cmsSigAbstractClass || deviceClass == cmsSigNamedColorClass {
            cmsCloseProfile(profile)
            throw Rejection(description: "a device link, abstract or named colour profile cannot describe an image")
        }
        return profile
    }

    /// The colour space an opened profile describes, as a layout family: 3 (RGB), 1 (grey), 4 (CMYK), or 0.
    static func channelCount(_ profile: cmsHPROFILE) -> Int {
        switch cmsGetColorSpace(profile) {
        case cmsSigRgbData: return 3
        case cmsSigGrayData: return 1
        case cmsSigCmykData: return 4
        default: return 0
        }
    }

    /// lcms's built-in sRGB (v4, parametric curve). The caller closes it.
    static func makeSRGB() -> cmsHPROFILE? { cmsCreate_sRGBProfileTHR(context) }

    /// The sRGB transfer function (IEC 61966-2-1), encoded value → linear.
    static func srgbToLinear(_ v: Double) -> Double {
        v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Whether an RGB matrix/TRC profile is sRGB in all but name, as imgproxy skips the standard sRGB profiles:
    /// no A2B/D2B tables, colorants (`rXYZ`, `gXYZ`, `bXYZ`) within 0.002 of sRGB's D50-adapted ones, a white
    /// point of D50 or D65 (v2 profiles store either), and each TRC within 0.5/255 of the sRGB curve at every
    /// 8-bit code. Such a profile is not transformed: the pixels stay as decoded.
    static func isSRGBEquivalent(_ profile: cmsHPROFILE) -> Bool {
        guard cmsGetColorSpace(profile) == cmsSigRgbData else { return false }
        for tag in [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag, cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag]
        where cmsIsTag(profile, tag) != 0 {
            return false
        }
        let expected: [(cmsTagSignature, (Double, Double, Double))] = [
            (cmsSigRedColorantTag, (0.4361, 0.2225, 0.0139)),
            (cmsSigGreenColorantTag, (0.3851, 0.7169, 0.0971)),
            (cmsSigBlueColorantTag, (0.1431, 0.0606, 0.7141)),
        ]
        for (tag, value) in expected {
            guard let xyz = readXYZ(profile, tag), close(xyz, value, 0.002) else { return false }
        }
        if let white = readXYZ(profile, cmsSigMediaWhitePointTag),
           !close(white, (0.9642, 1.0, 0.8249), 0.003), !close(white, (0.9505, 1.0, 1.0890), 0.003) {
            return false
        }
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let raw = cmsReadTag(profile, tag) else { return false }
            let curve = OpaquePointer(raw)
            for code in 0...255 {
                let v = Double(code) / 255
                let got = Double(cmsEvalToneCurveFloat(curve, Float(v)))
                if abs(got - srgbToLinear(v)) > 0.5 / 255 { return false }
            }
        }
        return true
    }

    private static func readXYZ(_ profile: cmsHPROFILE, _ tag: cmsTagSignature) -> (Double, Double, Double)? {
        guard let raw = cmsReadTag(profile, tag) else { return nil }
        let xyz = raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee
        return (xyz.X, xyz.Y, xyz.Z)
    }

    private static func close(_ a: (Double, Double, Double), _ b: (Double, Double, Double), _ tolerance: Double) -> Bool {
        abs(a.0 - b.0) <= tolerance && abs(a.1 - b.1) <= tolerance && abs(a.2 - b.2) <= tolerance
    }
}

/// Where the colour stage's debug messages go: why a profile was ignored, lcms's own errors. Kept in memory (the
/// last 16 and a count, for tests and `webimage info`) and written to stderr only when the environment variable
/// `WEBIMAGE_COLOR_DEBUG` is set.
///
/// - Important: Thread-safe.
enum ColorLog {
    private static let state = Mutex<(count: Int, recent: [String])>((0, []))
    private static let echoes = ProcessInfo.processInfo.environment["WEBIMAGE_COLOR_DEBUG"] != nil

    /// Records one message.
    static func record(_ message: String) {
        state.withLock { s in
            s.count += 1
            s.recent.append(message)
            if s.recent.count > 16 { s.recent.removeFirst() }
        }
        if echoes { FileHandle.standardError.write(Data("webimage colour: \(message)\n".utf8)) }
    }

    /// Messages recorded so far (a count) and the last few.
    static var snapshot: (count: Int, recent: [String]) { state.withLock { $0 } }
}
