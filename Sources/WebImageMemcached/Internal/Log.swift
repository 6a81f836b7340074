import Logging

/// The module's logger (label `webimage.memcached`).
let memcachedLog = Logger(label: "webimage.memcached")
