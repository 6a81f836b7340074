internal import CWebImageLCMS
import Foundation

extension MatrixShaperTransform {
    /// The fast path and Little CMS's own 8-bit RGBA transform for the same ICC `source` → `target` (sRGB when
    /// `nil`), made from the same opened profiles, for the accuracy tests and the benchmark. `fast` is `nil` when
    /// the pair is not a plain matrix-shaper one; `littleCMS` when lcms refuses the pair or a profile is unusable.
    static func comparison(source: Data, target: Data?) -> (fast: MatrixShaperTransform?, littleCMS: ColorTransform?) {
        guard let input = try? LittleCMS.openProfile(source) else { return (nil, nil) }
        defer { cmsCloseProfile(input) }
        let output: cmsHPROFILE?
        if let target { output = try? LittleCMS.openProfile(target) } else { output = LittleCMS.makeSRGB() }
        guard let output else { return (nil, nil) }
        defer { cmsCloseProfile(output) }
        guard LittleCMS.channelCount(input) == 3, LittleCMS.channelCount(output) == 3 else { return (nil, nil) }
        return (MatrixShaperTransform(source: input, destination: output),
                ColorTransform(source: input, destination: output, layout: .rgba, allowsMatrixShaper: false))
    }
}
