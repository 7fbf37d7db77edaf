import CZeroMQ
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a ``DescriptorWaiter`` sleeps.
enum DescriptorWaitMethod {
    /// epoll(7): a wake-up costs in proportion to the ready descriptors, not the watched ones.
    /// Linux only.
    case epoll
    /// poll(2): portable; every wait passes every watched descriptor to the kernel.
    case poll

    /// epoll where the system has it.
    static var best: DescriptorWaitMethod {
        #if os(Linux)
        .epoll
        #else
        .poll
        #endif
    }
}

/// The file descriptors an ``EventLoop`` sleeps on, each with a token the loop chose, watched
/// for readability (level-triggered). Confined to the loop's thread.
final class DescriptorWaiter {
    private let method: DescriptorWaitMethod
    #if os(Linux)
    private var epollFD: Int32 = -1
    private var epollEvents = [epoll_event](repeating: epoll_event(), count: 256)
    #endif
    private var pollDescriptors: [pollfd] = []
    private var pollTokens: [UInt64] = []

    init(method: DescriptorWaitMethod) throws(ZeroMQError) {
        self.method = method
        #if os(Linux)
        if method == .epoll {
            epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epollFD >= 0 else {
                throw ZeroMQError(errno: errno, operation: "epoll_create1", message: String(cString: strerror(errno)))
            }
        }
        #else
        precondition(method == .poll, "epoll exists on Linux only")
        #endif
    }

    deinit {
        #if os(Linux)
        if epollFD >= 0 { close(epollFD) }
        #endif
    }

    /// Watches `fd` for readability, reporting `token` when it is readable. Returns the errno on
    /// failure, 0 on success.
    func add(_ fd: Int32, token: UInt64) -> Int32 {
        switch method {
        case .epoll:
            #if os(Linux)
            var event = epoll_event(events: EPOLLIN.rawValue, data: epoll_data_t(u64: token))
            return epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 ? 0 : errno
            #else
            return EINVAL
            #endif
        case .poll:
            pollDescriptors.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            pollTokens.append(token)
            return 0
        }
    }

    /// Stops watching `fd` (a no-op for descriptors it does not watch, or that were closed).
    func remove(_ fd: Int32) {
        switch method {
        case .epoll:
            #if os(Linux)
            var event = epoll_event()
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
            #endif
        case .poll:
            guard let index = pollDescriptors.firstIndex(where: { $0.fd == fd }) else { return }
            pollDescriptors.remove(at: index)
            pollTokens.remove(at: index)
        }
    }

    /// Sleeps until a watched descriptor is readable or `timeoutMs` passes (-1: no limit; 0: just
    /// look), and appends the tokens of the readable ones to `tokens`. Returns the errno of a
    /// failed wait (EINTR when a signal interrupted it), 0 otherwise.
    func wait(timeoutMs: Int, into tokens: inout [UInt64]) -> Int32 {
        let timeout = Int32(clamping: timeoutMs)
        switch method {
        case .epoll:
            #if os(Linux)
            let count = epollEvents.withUnsafeMutableBufferPointer {
                epoll_wait(epollFD, $0.baseAddress, Int32($0.count), timeout)
            }
            guard count >= 0 else { return errno }
            for index in 0..<Int(count) { tokens.append(epollEvents[index].data.u64) }
            return 0
            #else
            return EINVAL
            #endif
        case .poll:
            let count = pollDescriptors.withUnsafeMutableBufferPointer {
                poll($0.baseAddress, nfds_t($0.count), timeout)
            }
            guard count >= 0 else { return errno }
            guard count > 0 else { return 0 }
            for index in pollDescriptors.indices where pollDescriptors[index].revents != 0 {
                tokens.append(pollTokens[index])
            }
            return 0
        }
    }
}
