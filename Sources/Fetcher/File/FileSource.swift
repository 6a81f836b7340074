import Foundation

/// An open `file` URL, read by the fetcher itself, never by libcurl (libcurl 7.88's FILE protocol reads
/// `/dev/zero` forever and ignores the timeout). Only regular files: `open` with `O_NONBLOCK` (so a FIFO cannot
/// block the network thread), then `fstat` on the descriptor (no race between check and read); devices,
/// FIFOs, sockets and directories are refused before any byte is read, and so is a size over the limit.
/// Read in bounded chunks (`readChunk`) that the network loop interleaves with its other transfers.
///
/// Confined to the network thread; owned by one `Transfer`. Not Sendable.
final class FileSource {
    /// Bytes read per step of the network loop: large enough to read fast, small enough not to hold the
    /// thread (one 256 KB `read` from the page cache takes tens of microseconds).
    static let chunkSize = 256 * 1_024

    let path: String
    /// The size `fstat` reported.
    let size: Int64
    private let descriptor: Int32
    private var buffer: [UInt8]

    private init(path: String, descriptor: Int32, size: Int64) {
        self.path = path
        self.descriptor = descriptor
        self.size = size
        buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    deinit {
        close(descriptor)
    }

    /// Opens `path` for reading if it is a regular file of at most `limit` bytes (nil: any size).
    ///
    /// - Returns: `FetchError.fileUnreadable` with `errno` (`ENOENT`, `EACCES`, `EISDIR` for a directory),
    ///   `.notRegularFile` for a device, FIFO or socket, `.responseTooLarge` for a file over `limit`.
    static func open(path: String, limit: Int64?) -> Result<FileSource, FetchError> {
        // Refuse special files before opening them (opening some devices has effects of its own), then check
        // the descriptor again: the path may have been replaced in between.
        var before = stat()
        guard stat(path, &before) == 0 else { return .failure(.fileUnreadable(path: path, errno: errno)) }
        if let refusal = refusal(path: path, mode: before.st_mode) { return .failure(refusal) }
        let descriptor = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else { return .failure(.fileUnreadable(path: path, errno: errno)) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let error = errno
            close(descriptor)
            return .failure(.fileUnreadable(path: path, errno: error))
        }
        if let refusal = refusal(path: path, mode: info.st_mode) {
            close(descriptor)
            return .failure(refusal)
        }
        let size = Int64(info.st_size)
        if let limit, size > limit {
            close(descriptor)
            return .failure(.responseTooLarge(limit: limit))
        }
        return .success(FileSource(path: path, descriptor: descriptor, size: size))
    }

    /// What reading one chunk gave.
    enum Step {
        /// Bytes read (valid until the next call).
        case bytes(UnsafeRawBufferPointer)
        /// Nothing to read now (`EAGAIN`, e.g. a special file that claims to be regular); try again later.
        case wouldBlock
        /// The end of the file.
        case end
        /// A read error.
        case failure(FetchError)
    }

    /// Reads the next chunk (one `read`, retried on `EINTR`) and hands it to `body`.
    func readChunk<R>(_ body: (Step) -> R) -> R {
        buffer.withUnsafeMutableBytes { raw in
            while true {
                let count = read(descriptor, raw.baseAddress, raw.count)
                if count > 0 { return body(.bytes(UnsafeRawBufferPointer(rebasing: raw[0..<count]))) }
                if count == 0 { return body(.end) }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: return body(.wouldBlock)
                case let error: return body(.failure(.fileUnreadable(path: path, errno: error)))
                }
            }
        }
    }

    /// Why a file of `mode` is not read: nil for a regular file, `EISDIR` for a directory, else its kind.
    private static func refusal(path: String, mode: mode_t) -> FetchError? {
        switch kind(of: mode) {
        case nil: return nil
        case .directory?: return .fileUnreadable(path: path, errno: EISDIR)
        case let kind?: return .notRegularFile(path: path, kind: kind)
        }
    }

    /// The non-regular kind of `mode`, or nil for a regular file.
    static func kind(of mode: mode_t) -> FileKind? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return .directory
        case S_IFCHR: return .characterDevice
        case S_IFBLK: return .blockDevice
        case S_IFIFO: return .fifo
        case S_IFSOCK: return .socket
        default: return .other
        }
    }
}

@available(*, unavailable)
extension FileSource: Sendable {}
