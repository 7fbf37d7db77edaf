import HummingbirdCore
import Logging
import NIOCore

/// An admin connection: Hummingbird's HTTP/1 channel with a ``RequestGuardHandler`` in front of
/// its parser, so requests over the limits never reach the parser.
struct AdminChildChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let http: HTTP1Channel
    let limits: AdminServer.Limits

    init(limits: AdminServer.Limits, responder: @escaping HTTPChannelHandler.Responder) {
        self.limits = limits
        // The parser's own limits back up the guard's; they are never the first to trip.
        let decoder = HTTP1Channel.Configuration.DecoderConfiguration(
            maxHeaderFieldSize: limits.maxHeaderBytes,
            maxHeaderListSize: limits.maxHeaderBytes,
            maxHeaderFieldCount: 1000)
        http = HTTP1Channel(
            responder: responder,
            configuration: HTTP1Channel.Configuration(
                idleTimeout: RequestGuardHandler.timeAmount(seconds: limits.idleTimeout),
                httpDecoderConfiguration: decoder))
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = self.limits
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(RequestGuardHandler(limits: limits), position: .first)
        }.flatMap {
            http.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await http.handle(value: value, logger: logger)
    }
}
