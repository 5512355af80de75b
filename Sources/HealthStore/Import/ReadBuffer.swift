import Foundation
import Platform

/// The block buffer both import readers (``ByteLines``, ``ArrayElements``) read through: a file
/// descriptor read in blocks, the bytes not yet consumed kept at the front. Memory is one block,
/// doubled only while a single record is longer than the buffer.
struct ReadBuffer {
    private let fd: Int32
    private var storage: UnsafeMutableRawBufferPointer
    /// Bytes of the buffer holding data.
    private(set) var filled = 0
    /// The descriptor has reported its end.
    private(set) var eof = false
    /// Bytes read from the descriptor so far.
    private(set) var bytesRead = 0

    /// Reads `fd` (not closed here) in blocks of `blockSize` bytes.
    init(fd: Int32, blockSize: Int) {
        self.fd = fd
        storage = .allocate(byteCount: max(16, blockSize), alignment: 16)
    }

    /// The buffer's bytes (valid until the next ``fill(keeping:)``).
    var bytes: UnsafeMutablePointer<UInt8> { storage.baseAddress!.assumingMemoryBound(to: UInt8.self) }

    /// Frees the buffer; unusable afterwards.
    mutating func close() {
        storage.deallocate()
        storage = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    }

    /// Reads more: drops the bytes before `keep` (moving the rest to the front, doubling the
    /// buffer when that rest fills it) and appends what one `read` gives (nothing at the end of
    /// the file, which sets ``eof``). Returns `keep`: every offset the caller holds moves down
    /// by it.
    /// - Throws: ``ByteLines/ReadError`` when reading fails.
    @discardableResult
    mutating func fill(keeping keep: Int) throws -> Int {
        if keep > 0 {
            let rest = filled - keep
            if rest > 0 { memmove(storage.baseAddress!, storage.baseAddress! + keep, rest) }
            filled = rest
        }
        if filled == storage.count {
            let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 16)
            bigger.copyMemory(from: UnsafeRawBufferPointer(storage))
            storage.deallocate()
            storage = bigger
        }
        let n = SystemCall.retrying { Glibc.read(fd, storage.baseAddress! + filled, storage.count - filled) }
        if n < 0 { throw ByteLines.ReadError(errno: errno) }
        if n == 0 { eof = true } else { filled += n; bytesRead += n }
        return keep
    }
}
