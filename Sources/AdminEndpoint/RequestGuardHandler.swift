import NIOCore

/// The first handler of every admin connection, ahead of the HTTP parser: passes bytes on while
/// the requests stay within ``AdminServer/Limits`` (see ``RequestScanner``), and otherwise answers
/// the status itself and closes. It also bounds the time a request may take to arrive, and closes
/// the connection at once when the server stops.
///
/// A refused client's output side is shut at once and whatever it still sends is read and dropped
/// for ``AdminServer/Limits/lingerTimeout`` at most, so it reads the status instead of a reset.
final class RequestGuardHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var scanner: RequestScanner
    private let requestTimeout: TimeAmount
    private let requestTimeoutSeconds: Double
    private let lingerTimeout: TimeAmount
    /// Fires when the request under way has taken too long to arrive.
    private var requestDeadline: Scheduled<Void>?
    private var lingerDeadline: Scheduled<Void>?
    private var rejected = false

    init(limits: AdminServer.Limits) {
        scanner = RequestScanner(limits: limits)
        requestTimeoutSeconds = limits.requestTimeout
        requestTimeout = Self.timeAmount(seconds: limits.requestTimeout)
        lingerTimeout = Self.timeAmount(seconds: limits.lingerTimeout)
    }

    static func timeAmount(seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(max(0, min(seconds, 86_400)) * 1_000_000_000))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !rejected else { return }  // lingering: drop
        var buffer = unwrapInboundIn(data)
        let outcome = buffer.withUnsafeReadableBytes { scanner.scan($0) }
        if let rejection = outcome.rejection {
            if outcome.accepted > 0, let accepted = buffer.readSlice(length: outcome.accepted) {
                context.fireChannelRead(wrapInboundOut(accepted))
            }
            reject(context: context, rejection)
            return
        }
        if outcome.completed > 0 { cancelRequestDeadline() }
        if scanner.isMidRequest { armRequestDeadline(context: context) }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // The server stops: in-flight requests are cut short rather than waited for.
            context.close(promise: nil)
            return
        }
        if rejected, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelRequestDeadline()
        lingerDeadline?.cancel()
        lingerDeadline = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelRequestDeadline()
        lingerDeadline?.cancel()
        lingerDeadline = nil
    }

    private func armRequestDeadline(context: ChannelHandlerContext) {
        guard requestDeadline == nil else { return }
        let loopBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        requestDeadline = context.eventLoop.scheduleTask(in: requestTimeout) {
            let (handler, context) = loopBound.value
            handler.requestDeadline = nil
            handler.reject(context: context, .timedOut(seconds: handler.requestTimeoutSeconds))
        }
    }

    private func cancelRequestDeadline() {
        requestDeadline?.cancel()
        requestDeadline = nil
    }

    /// Answers `rejection`, shuts the output, and closes once the client stops sending or the
    /// linger time is up.
    private func reject(context: ChannelHandlerContext, _ rejection: RequestScanner.Rejection) {
        guard !rejected else { return }
        rejected = true
        cancelRequestDeadline()
        let response = context.channel.allocator.buffer(bytes: rejection.response)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(response)).whenComplete { _ in
            loopBound.value.close(mode: .output, promise: nil)
        }
        let handlerBound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        lingerDeadline = context.eventLoop.scheduleTask(in: lingerTimeout) {
            let (handler, context) = handlerBound.value
            handler.lingerDeadline = nil
            context.close(promise: nil)
        }
    }
}
