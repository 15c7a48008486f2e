// SPDX-License-Identifier: Apache-2.0
import CKioskSys
import Glibc

/// A thread of its own for a loop that polls descriptors (a directory watch, the touchscreen
/// reader, the control socket): ``start(_:)`` runs the body once on a new pthread, ``stop()``
/// makes ``stopDescriptor`` readable and joins the thread. The body must include
/// ``stopDescriptor`` in every `poll(2)` it blocks in and return once it is readable
/// (``isStopRequested``).
///
/// The body's closure is held until the thread ends: whatever it captures (the owner, usually)
/// lives at least that long, so an owner that starts one must call ``stop()`` when done.
public final class WorkerThread: @unchecked Sendable {
    /// What the thread is for, in error messages (`pthread_create NAME`).
    public let name: String
    /// Read end of the stop pipe: readable once ``stop()`` was called (non-blocking, close-on-exec).
    public let stopDescriptor: Int32
    private let stopWrite: Int32
    private var thread: pthread_t?
    private let tid = Locked<Int32?>(nil)

    /// Makes the stop pipe; starts nothing. Throws ``SystemError`` (`pipe`).
    public init(name: String) throws(SystemError) {
        self.name = name
        let fds = try makeWakePipe()
        stopDescriptor = fds.read
        stopWrite = fds.write
    }

    deinit {
        stop()
        close(stopDescriptor)
        close(stopWrite)
    }

    /// The thread's kernel id (gettid(2), its `/proc/self/task/TID`) once it has started
    /// running; nil before. Kept after the thread ends (for tests: that directory is gone).
    public var threadID: Int32? { tid.withLock { $0 } }

    /// Whether the thread runs (started and not yet stopped).
    public var isRunning: Bool { thread != nil }

    /// Whether ``stop()`` was called (``stopDescriptor`` is readable). Never blocks.
    public var isStopRequested: Bool { PollSet.isReadable(stopDescriptor) }

    /// The thread's name in `/proc/PID/task/TID/comm` (ps, top, gdb): `kc-` and the first
    /// word of ``name``, within the kernel's 15 bytes (TASK_COMM_LEN 16 with its NUL).
    public var threadName: String {
        let word = name.prefix(while: { $0 != " " })
        var shown = "kc-"
        for c in word.unicodeScalars where c.isASCII && shown.utf8.count < 15 { shown.unicodeScalars.append(c) }
        return shown
    }

    /// Runs `body` on a new thread (once; later calls while it runs do nothing), named
    /// ``threadName``. Throws ``SystemError`` (`pthread_create NAME`) when the thread cannot be created.
    public func start(_ body: @escaping @Sendable () -> Void) throws(SystemError) {
        guard thread == nil else { return }
        final class Box {
            let body: @Sendable () -> Void, name: String, tid: Locked<Int32?>
            init(_ body: @escaping @Sendable () -> Void, name: String, tid: Locked<Int32?>) {
                self.body = body; self.name = name; self.tid = tid
            }
        }
        var pthread = pthread_t()
        let context = Unmanaged.passRetained(Box(body, name: threadName, tid: tid)).toOpaque()
        let rc = pthread_create(&pthread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            _ = kc_thread_set_name(box.name)
            box.tid.withLock { $0 = kc_thread_id() }
            box.body()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<Box>.fromOpaque(context).release()
            throw SystemError(operation: "pthread_create", path: name, errno: rc)
        }
        thread = pthread
    }

    /// Asks the thread to end (``stopDescriptor`` becomes readable) and waits for it. Idempotent.
    /// Called on the worker itself (its owner released there last), it detaches instead of
    /// waiting for itself.
    public func stop() {
        guard let handle = thread else { return }
        thread = nil
        var byte: UInt8 = 1
        _ = write(stopWrite, &byte, 1)
        if pthread_equal(handle, pthread_self()) != 0 { pthread_detach(handle) } else { pthread_join(handle, nil) }
    }
}
