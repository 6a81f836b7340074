import Dispatch
import Foundation
import Synchronization
import WebImage

extension BatchLoader {
    /// Loads `urls` and hands each outcome to `process` as it completes (in completion order), on one serial
    /// queue, keeping none of them: a batch holds the decoded images of the requests in flight and of the
    /// outcome being processed, never those of finished ones (`load` keeps every outcome, for callers that
    /// need them all at the end). A request slot is given back only once its outcome was processed, so at
    /// most `concurrency` decoded images are held at once, whatever `process` does (writing, encoding).
    ///
    /// - Parameter process: runs once per URL with its index in `urls`, one call at a time.
    /// - Important: Blocks the calling thread until every outcome was processed; call it from the command's
    ///   thread, not from a completion.
    func stream(_ urls: [URL], process: @escaping @Sendable (Int, LoadOutcome) -> Void) {
        let gate = DispatchSemaphore(value: max(1, concurrency))
        let group = DispatchGroup()
        let processing = DispatchQueue(label: "webimage.batch.outcomes")
        for (index, url) in urls.enumerated() {
            gate.wait()
            group.enter()
            let start = DispatchTime.now().uptimeNanoseconds
            let received = Atomic<Int64>(0)
            let progress: ImageProgress = { bytes, _ in received.store(bytes, ordering: .relaxed) }
            manager.requestImage(url: url, options: options, thumbnailPixelSize: thumbnailPixelSize,
                                 progress: progress) { image, url, source, stage, error in
                guard stage != .progress else { return }
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
                // A thumbnail keeps no original bytes: then count what was downloaded.
                let bytes = Int64(image?.originalData?.count ?? 0)
                let outcome = LoadOutcome(url: url, image: error == nil ? image : nil, source: source, error: error,
                                          seconds: seconds, bytes: bytes > 0 ? bytes : received.load(ordering: .relaxed))
                processing.async {
                    process(index, outcome)
                    gate.signal()
                    group.leave()
                }
            }
        }
        group.wait()
    }
}
