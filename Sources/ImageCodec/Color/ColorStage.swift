internal import CWebImageLCMS
import Foundation

/// What the colour stage will do to one image's pixels, decided before the decoder produces them (so a CMYK
/// JPEG is decoded as raw inks only when a transform will convert them).
struct ColorPlan: Sendable {
    /// The transform to run, or `nil` when the pixels stay as decoded.
    var transform: ColorTransform?
    /// The ICC profile the pixels will be in when not sRGB (`.preserve`'s source profile, `.target`'s profile);
    /// `nil` for sRGB pixels.
    var pixelICCProfile: Data?

    /// A plan that changes nothing and leaves sRGB pixels.
    static let none = ColorPlan(transform: nil, pixelICCProfile: nil)

    /// Runs the transform, if any, over `buffer` in place (straight or opaque pixels; never premultiplied ones).
    func apply(to buffer: inout PixelBuffer) {
        transform?.apply(to: &buffer)
    }
}

/// The one colour-conversion stage every decoder hands its colour description to (see `ColorManagement`).
///
/// Precedence among what a file says (PNG may say several things; libpng's order): the ICC profile, then a
/// declared sRGB, then CICP, then gamma (+ chromaticities). A description that cannot be used is skipped with a
/// debug log (`ColorLog`) and the next one is tried; with none left the image is treated as untagged (sRGB).
///
/// - Important: Stateless and thread-safe; transforms come from `ColorTransformCache.shared`.
enum ColorStage {
    /// PNG `gAMA` values treated as sRGB (without `cHRM`, or with sRGB's): 1/2.2 ± 0.0005, what most tools write
    /// for sRGB images (as Chrome and skia do), so such files stay bit-identical.
    static let srgbGammaRange = 0.45405...0.45505

    /// Decides what to do with pixels of `layout` described by `colorSpace` under `management`.
    static func plan(colorSpace: ImageColorSpace?, layout: ColorLayout, management: ColorManagement,
                     cache: ColorTransformCache = .shared) -> ColorPlan {
        switch management {
        case .preserve:
            return preservePlan(colorSpace: colorSpace, layout: layout)
        case .sRGB:
            return convertPlan(colorSpace: colorSpace, layout: layout, target: nil, cache: cache)
        case .target(let target):
            return convertPlan(colorSpace: colorSpace, layout: layout, target: usableTarget(target), cache: cache)
        }
    }

    /// `.preserve`: no transform; the source's ICC profile stays with RGB pixels when lcms can read it.
    private static func preservePlan(colorSpace: ImageColorSpace?, layout: ColorLayout) -> ColorPlan {
        guard layout == .rgba || layout == .rgba16, let icc = colorSpace?.iccProfile, let profile = try? LittleCMS.openProfile(icc) else {
            return .none
        }
        defer { cmsCloseProfile(profile) }
        return LittleCMS.channelCount(profile) == 3 ? ColorPlan(transform: nil, pixelICCProfile: icc) : .none
    }

    /// The target profile when it is a usable RGB output profile and not sRGB itself; `nil` means sRGB.
    static func usableTarget(_ target: Data) -> Data? {
        let profile: cmsHPROFILE
        do { profile = try LittleCMS.openProfile(target) } catch {
            ColorLog.record("target profile ignored, converting to sRGB: \(error)")
            return nil
        }
        defer { cmsCloseProfile(profile) }
        guard LittleCMS.channelCount(profile) == 3 else {
            ColorLog.record("target profile ignored (not RGB), converting to sRGB")
            return nil
        }
        return LittleCMS.isSRGBEquivalent(profile) ? nil : target
    }

    /// One thing a file said, as a source for a transform.
    private enum Source {
        case icc(Data)
        case sRGB
        case synthetic(key: String, make: () -> cmsHPROFILE?)
    }

    /// What `colorSpace` says, in precedence order.
    private static func sources(_ colorSpace: ImageColorSpace) -> [Source] {
        var list: [Source] = []
        if let icc = colorSpace.iccProfile { list.append(.icc(icc)) }
        if colorSpace.isDeclaredSRGB { list.append(.sRGB) }
        if let cicp = colorSpace.cicp {
            if SyntheticProfiles.isSRGB(cicp) {
                list.append(.sRGB)
            } else if cicp.colorPrimaries != 2 || cicp.transferCharacteristics != 2 {
                list.append(.synthetic(key: "cicp \(cicp.colorPrimaries)/\(cicp.transferCharacteristics)") {
                    SyntheticProfiles.makeCICP(cicp)
                })
            }
        }
        if let gamma = colorSpace.gamma {
            let chromaticities = colorSpace.chromaticities.flatMap { SyntheticProfiles.isPlausible($0) ? $0 : nil }
            let isSRGBPrimaries = chromaticities.map { isClose($0, .bt709) } ?? true
            if srgbGammaRange.contains(gamma) && isSRGBPrimaries {
                list.append(.sRGB)
            } else {
                let c = chromaticities ?? .bt709
                let key = "gama \(gamma) chrm \(c.whiteX) \(c.whiteY) \(c.redX) \(c.redY) \(c.greenX) \(c.greenY) \(c.blueX) \(c.blueY)"
                list.append(.synthetic(key: key) { SyntheticProfiles.makeGamma(gamma, chromaticities: c) })
            }
        }
        return list
    }

    private static func isClose(_ a: ImageColorSpace.Chromaticities, _ b: ImageColorSpace.Chromaticities) -> Bool {
        let x = [a.whiteX, a.whiteY, a.redX, a.redY, a.greenX, a.greenY, a.blueX, a.blueY]
        let y = [b.whiteX, b.whiteY, b.redX, b.redY, b.greenX, b.greenY, b.blueX, b.blueY]
        return zip(x, y).allSatisfy { abs($0 - $1) <= 0.002 }
    }

    /// `.sRGB` (target `nil`) or `.target`: the first usable source's transform.
    private static func convertPlan(colorSpace: ImageColorSpace?, layout: ColorLayout, target: Data?,
                                    cache: ColorTransformCache) -> ColorPlan {
        let targetKey = target ?? Data()
        for source in colorSpace.map(sources) ?? [] {
            let entry: ColorTransformCache.Entry
            switch source {
            case .icc(let bytes):
                guard bytes.count <= LittleCMS.maxProfileBytes else {
                    ColorLog.record("ICC profile of \(bytes.count) bytes over the 4 MiB limit: ignored")
                    continue
                }
                entry = cache.entry(for: .init(source: bytes, target: targetKey, layout: layout)) {
                    makeEntry(iccSource: bytes, layout: layout, target: target)
                }
            case .sRGB:
                return srgbSourcePlan(layout: layout, target: target, cache: cache)
            case .synthetic(let key, let make):
                // Synthetic profiles describe RGB; grey expanded to RGBA converts the same way.
                guard layout == .rgba || layout == .greyInRGBA || layout == .rgba16 else { continue }
                let rgbLayout: ColorLayout = layout == .rgba16 ? .rgba16 : .rgba
                entry = cache.entry(for: .init(source: Data(key.utf8), target: targetKey, layout: rgbLayout)) {
                    makeEntry(profile: make(), name: key, layout: rgbLayout, target: target)
                }
            }
            switch entry {
            case .identity: return ColorPlan(transform: nil, pixelICCProfile: target)
            case .transform(let transform): return ColorPlan(transform: transform, pixelICCProfile: target)
            case .unusable: continue
            }
        }
        // Untagged (or nothing usable): the pixels are taken as sRGB.
        guard layout == .rgba || layout == .greyInRGBA || layout == .rgba16 else { return .none }
        return srgbSourcePlan(layout: layout, target: target, cache: cache)
    }

    /// sRGB pixels: nothing to do for an sRGB target; lcms's sRGB → target otherwise.
    private static func srgbSourcePlan(layout: ColorLayout, target: Data?, cache: ColorTransformCache) -> ColorPlan {
        guard let target, layout == .rgba || layout == .greyInRGBA || layout == .rgba16 else { return .none }
        let rgbLayout: ColorLayout = layout == .rgba16 ? .rgba16 : .rgba
        let entry = cache.entry(for: .init(source: Data("srgb".utf8), target: target, layout: rgbLayout)) {
            makeEntry(profile: LittleCMS.makeSRGB(), name: "sRGB", layout: rgbLayout, target: target)
        }
        if case .transform(let transform) = entry { return ColorPlan(transform: transform, pixelICCProfile: target) }
        return .none
    }

    /// Builds the entry for an embedded ICC profile.
    private static func makeEntry(iccSource bytes: Data, layout: ColorLayout, target: Data?) -> ColorTransformCache.Entry {
        if let target, target == bytes { return .identity }
        let profile: cmsHPROFILE
        do { profile = try LittleCMS.openProfile(bytes) } catch {
            ColorLog.record("ICC profile ignored: \(error)")
            return .unusable
        }
        defer { cmsCloseProfile(profile) }
        guard LittleCMS.channelCount(profile) == layout.profileChannels else {
            ColorLog.record("ICC profile ignored: \(LittleCMS.channelCount(profile)) channels for \(layout) pixels")
            return .unusable
        }
        if target == nil, layout == .rgba || layout == .rgba16, LittleCMS.isSRGBEquivalent(profile) { return .identity }
        return makeTransform(source: profile, name: "ICC profile", layout: layout, target: target)
    }

    /// Builds the entry for a synthetic profile (closing it).
    private static func makeEntry(profile: cmsHPROFILE?, name: String, layout: ColorLayout,
                                  target: Data?) -> ColorTransformCache.Entry {
        guard let profile else {
            ColorLog.record("\(name): no profile could be built")
            return .unusable
        }
        defer { cmsCloseProfile(profile) }
        return makeTransform(source: profile, name: name, layout: layout, target: target)
    }

    /// The transform source → target (sRGB when `nil`).
    private static func makeTransform(source: cmsHPROFILE, name: String, layout: ColorLayout,
                                      target: Data?) -> ColorTransformCache.Entry {
        let destination: cmsHPROFILE?
        if let target { destination = try? LittleCMS.openProfile(target) } else { destination = LittleCMS.makeSRGB() }
        guard let destination else { return .unusable }
        defer { cmsCloseProfile(destination) }
        guard let transform = ColorTransform(source: source, destination: destination, layout: layout) else {
            ColorLog.record("\(name) ignored: lcms could not build a transform")
            return .unusable
        }
        return .transform(transform)
    }
}
