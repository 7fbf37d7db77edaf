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
        // The connection's requests run on its own event loop: reading a request, answering it and
        // writing the answer then take no hop through the cooperative pool and back (two thread
        // wake-ups a request, each way), which cost more than most answers on a loaded machine.
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await http.handle(value: value, logger: logger)
        }
    }
}

/// Runs tasks that prefer it on a NIO event loop. The work run there must not block: it holds up
/// every other connection of that loop.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
