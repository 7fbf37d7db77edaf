// What an app names besides ShowroomKit's own types: the error every call throws (with its code)
// and the video frames sources and sinks exchange. Re-exported one by one so that `import
// ShowroomKit` is all an app writes, without exposing the wire contract or the codecs' internals.
@_exported public import struct ShowroomWire.ShowroomError
@_exported public import struct MediaCodecs.I420Frame
@_exported public import struct MediaCodecs.EncodedVideoFrame
