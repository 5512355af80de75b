import GATT
import Glibc

extension SocketATTBearer {
    /// Two ends of `socketpair(AF_UNIX, SOCK_SEQPACKET)`: real sockets carrying real ATT
    /// bytes, one PDU per message, as the kernel's L2CAP ATT socket does.
    /// - Throws: ``ATTBearerError`` when the kernel refuses the socket pair.
    package static func makeSocketPair() throws -> (SocketATTBearer, SocketATTBearer) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else {
            throw ATTBearerError.fromErrno("socketpair")
        }
        return (try SocketATTBearer(fileDescriptor: fds[0]), try SocketATTBearer(fileDescriptor: fds[1]))
    }
}
