// `import WebImage` brings in the whole SDK: the pipeline here and the three layers below it.
@_exported import Fetcher
@_exported import ImageCodec
@_exported import KVCache
