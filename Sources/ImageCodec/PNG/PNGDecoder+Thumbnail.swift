import Foundation

extension PNGDecoder {
    /// Decodes a thumbnail of the stream `session` has read the header of: row by row into a
    /// `RowResampler` when not interlaced (no full-size buffer), else a full decode and a resize.
    static func decodeThumbnail(_ session: PNGDecodeSession, header: PNGDecodeSession.Header, plan: DownsamplePlan,
                                options: DecodeOptions) throws -> PixelBuffer {
        if header.isInterlaced {
            // Adam7: every odd row is only complete after pass 7, so rows cannot stream; decode whole.
            try options.limits.check(width: header.width, height: header.height)
            var full = try PixelBuffer(width: header.width, height: header.height, pixelFormat: options.pixelFormat,
                                       zeroed: false)
            let stride = full.bytesPerRow
            try full.withUnsafeMutableBytes {
                try session.decode(into: $0.baseAddress!, bytesPerRow: stride,
                                   premultiply: options.pixelFormat == .rgba8Premultiplied)
            }
            return try full.resized(width: plan.width, height: plan.height)
        }
        try plan.check(options.limits)
        let resampler = try RowResampler(sourceWidth: header.width, sourceHeight: header.height,
                                         destinationWidth: plan.width, destinationHeight: plan.height,
                                         sourceFormat: .rgba8, resultFormat: options.pixelFormat)
        let passes = try session.startRows()
        guard passes == 1 else {
            throw ImageCodecError.corruptData(format: .png, message: "unexpected interlace passes \(passes)")
        }
        let rowBytes = header.width * 4  // sourceWidth * 4 did not overflow in RowResampler.init
        guard let row = malloc(rowBytes) else { throw ImageCodecError.allocationFailed(byteCount: rowBytes) }
        defer { free(row) }
        for _ in 0..<header.height {
            try session.readRow(into: row)
            try resampler.consume(row: UnsafeRawBufferPointer(start: row, count: rowBytes))
        }
        try session.finishRows()
        return try resampler.finish()
    }
}
