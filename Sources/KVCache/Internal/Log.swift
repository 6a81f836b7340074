import Logging

/// The module's logger (label `webimage.kvcache`).
let kvLog = Logger(label: "webimage.kvcache")
