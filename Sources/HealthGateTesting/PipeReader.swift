import Foundation

/// Reads `handle` to its end of file on a thread of its own, handing each chunk to `chunk` as
/// it arrives, and returns the started thread.
///
/// Blocking reads, not `FileHandle.readabilityHandler`: tearing that handler's dispatch read
/// source down races the descriptor's close and can crash libdispatch's event loop
/// (`_dispatch_event_loop_drain`, SIGSEGV; swift-corelibs-libdispatch#949), which took a whole
/// CI test pass down once (2026-11-29). The thread ends at the end of file: when every writer
/// (the child process) has closed the pipe.
@discardableResult
public func readToEndOnThread(_ handle: FileHandle, _ chunk: @escaping @Sendable (Data) -> Void) -> Thread {
    let thread = Thread {
        while true {
            let data = handle.availableData
            if data.isEmpty { return }
            chunk(data)
        }
    }
    thread.start()
    return thread
}
