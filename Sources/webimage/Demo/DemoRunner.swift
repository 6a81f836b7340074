import Foundation
import WebImage

/// Runs the demo: paints and serves the gallery, loads it three times through `ImageManager` (cold, warm
/// disk with a new manager, warm memory with the same one), prints the table and writes the contact sheet
/// and the animation.
///
/// - Important: Blocks the calling thread for the whole run; not thread-safe (one run at a time).
struct DemoRunner {
    var outputFolder: URL
    var cachePath: String
    var concurrency: Int

    /// What a run produced. `failures` lists every image that failed in any phase.
    struct Report {
        var phases: [DemoPhase]
        var failures: [(phase: String, label: String, reason: String)]
        var contactSheet: URL
        var animation: URL?
    }

    func run() throws -> Report {
        let start = Date()
        print("Painting and encoding the gallery…")
        let gallery = try DemoGallery.make()
        let galleryBytes = gallery.reduce(Int64(0)) { $0 + Int64($1.data.count) }
        print("Gallery: \(gallery.count) images (\(Terminal.bytes(galleryBytes))) encoded by WebImage in "
              + Terminal.duration(Date().timeIntervalSince(start)))
        var resources: [String: GalleryServer.Resource] = [:]
        for item in gallery { resources[item.path] = .init(body: item.data, contentType: item.kind.contentType) }
        let server = try GalleryServer.start(resources: resources)
        defer { server.shutdown() }
        print("Serving on http://127.0.0.1:\(server.port)/ · cache: \(cachePath)")
        let urls = try gallery.map { item in
            guard let url = server.url(item.path) else { throw CLIError.internalFailure("bad gallery path \(item.path)") }
            return url
        }

        let cold = ImageManager(cache: try ImageCache(path: cachePath))
        if let disk = cold.cache?.diskCache, try disk.totalCount() > 0 {
            print("Emptying \(cachePath) for the cold pass")
            try disk.removeAllObjects()
        }
        let warm = ImageManager(cache: try ImageCache(path: cachePath))
        var phases: [DemoPhase] = []
        for (name, manager) in [("cold", cold), ("warm disk", warm), ("warm memory", warm)] {
            phases.append(load(urls, gallery: gallery, with: manager, phase: name))
        }
        cold.cache?.waitForPendingWrites() // the cache folder is kept for `webimage cache stats`

        var table = Table(DemoPhase.tableHeader, rightAligned: DemoPhase.numericColumns)
        for phase in phases { table.add(phase.tableRow) }
        print("")
        print(table.render())
        print("Note: cold and warm disk both decode every image; they differ by the transfer (loopback here, so little).")
        print("      warm memory hands back the decoded images the manager already holds.")
        print("")

        var failures: [(String, String, String)] = []
        for phase in phases {
            for (index, outcome) in phase.outcomes.enumerated() where !outcome.isSuccess {
                failures.append((phase.name, gallery[index].label, outcome.failureReason))
            }
        }
        // The image of each gallery entry from the latest phase that loaded it.
        let images = gallery.indices.map { index in phases.reversed().lazy.compactMap { $0.outcomes[index].image }.first }
        let sheet = try DemoOutputs.writeContactSheet(gallery: gallery, images: images, to: outputFolder)
        let animation = try DemoOutputs.writeAnimation(gallery: gallery, images: images, to: outputFolder)
        return Report(phases: phases, failures: failures, contactSheet: sheet, animation: animation)
    }

    /// One pass over the gallery with `manager`, with a progress bar. An image that loads with another size
    /// than the gallery painted counts as a failure.
    private func load(_ urls: [URL], gallery: [GalleryItem], with manager: ImageManager, phase: String) -> DemoPhase {
        let title = phase.padding(toLength: 11, withPad: " ", startingAt: 0)
        let bar = ProgressBar(title: title, total: urls.count)
        let sizes = Dictionary(uniqueKeysWithValues: zip(urls, gallery.map { Int64($0.data.count) }))
        let loader = BatchLoader(manager: manager, concurrency: concurrency)
        let start = Date()
        var outcomes = loader.load(urls) { outcome in bar.advance(bytes: outcome.isSuccess ? sizes[outcome.url] ?? 0 : 0) }
        let seconds = Date().timeIntervalSince(start)
        bar.finish()
        for index in outcomes.indices {
            guard let image = outcomes[index].image else { continue }
            let item = gallery[index]
            if image.width != item.width || image.height != item.height {
                outcomes[index].error = .decodeFailed(.corruptData(
                    format: image.format, message: "decoded \(image.width)x\(image.height), served \(item.width)x\(item.height)"))
                outcomes[index].image = nil
            }
        }
        let bytes = zip(outcomes, gallery).reduce(Int64(0)) { $0 + ($1.0.isSuccess ? Int64($1.1.data.count) : 0) }
        return DemoPhase(name: phase, outcomes: outcomes, seconds: seconds, bytes: bytes)
    }
}
