import WebImageSync

/// `Synchronization.Mutex` with ThreadSanitizer annotations (see `WebImageSync.Mutex`): this module's code
/// says `Mutex` and gets a lock TSan can see.
typealias Mutex = WebImageSync.Mutex
