import ImageCodec
import WebImageAVIF
import WebImageJXL
#if HEIF
import WebImageHEIF
#endif

extension ImageService {
    /// The optional codec modules the service registers in `ImageCodecRegistry.shared` (once per process, by the
    /// first `ImageService.init`): AVIF (decoding; encoding when the installed libavif has an AV1 encoder), JPEG XL
    /// (decoding and encoding) and, in a build with the `HEIF` package trait (the default), HEIC/HEIF (decoding).
    /// Without them the service answered 415 to AVIF, HEIC and JPEG XL sources.
    ///
    /// A build without the `HEIF` trait (`swift build --traits CommandLine,Service`) links no libheif, and so no
    /// libx265 (GPL-2+); it answers 415 to HEIC sources.
    public static var codecModules: [String] {
        var modules = ["AVIF \(AVIFCodec.libraryVersion)" + (AVIFCodec.isEncodingAvailable ? "" : " (decode only)"),
                       "JPEG XL \(JXLCodec.libraryVersion)"]
        #if HEIF
        modules.append("HEIF \(HEIFCodec.libraryVersion) (decode only)")
        #endif
        return modules
    }

    /// Whether this build reads HEIC/HEIF sources (the `HEIF` package trait).
    public static var readsHEIF: Bool {
        #if HEIF
        return true
        #else
        return false
        #endif
    }

    /// Registers the codec modules in `ImageCodecRegistry.shared`, once per process (a `static let` is run once,
    /// thread-safely); later calls do nothing.
    static func registerCodecModules() { _ = codecRegistrations }

    private static let codecRegistrations: Int = {
        var count = AVIFCodec.register().count + JXLCodec.register().count
        #if HEIF
        count += HEIFCodec.register().count
        #endif
        return count
    }()
}
