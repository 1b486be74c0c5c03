import PushTrailModel
import PushTrailStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one place that turns what went wrong into words for a person and an exit status:
/// every command's errors, and the store faults that end the process from a signal
/// handler.
enum Failure {
    /// The line to print (without the `pushtrail…: ` prefix), whether it is a usage error
    /// (which adds a pointer to `--help`), and the exit status; nil for a reader that
    /// went away (a closed pipe), which ends the command quietly with success.
    static func describe(_ error: any Error) -> (message: String, usage: Bool, status: Int32)? {
        switch error {
        case is BrokenPipe:
            return nil
        case let e as UsageError:
            return (e.message, true, ExitStatus.usage)
        case let e as CommandError:
            return (e.message, false, e.status)
        case let e as StoreError:
            return (words(for: e), false, ExitStatus.ioError)
        case let e as TimeExpression.Invalid:
            return (e.description, true, ExitStatus.usage)
        default:
            return ("\(error)", false, ExitStatus.ioError)
        }
    }

    /// A store error, with what to do about it.
    static func words(for error: StoreError) -> String {
        switch error {
        case .missing:
            "\(error): ingest events first, or pass --store DIR (or set PUSHTRAIL_STORE)"
        case .notADirectory:
            "\(error): --store names the directory that holds the store"
        case .insecure(let path, _):
            "\(error): run chmod 700 \(path)"
        case .newerFormat:
            "\(error): upgrade pushtrail"
        case .damaged:
            "\(error): run pushtrail verify"
        case .writeRefused:
            "\(error): fix the disk and run the same command again (duplicates are skipped)"
        case .notAStore, .io:
            error.description
        }
    }

    /// Makes store faults end the process with one line on stderr and exit 74, as
    /// `describe` does for errors that can be thrown. Installed once, before any store is
    /// opened.
    static func installFaultHandler() {
        _ = faultHandlerInstalled
    }

    private static let faultHandlerInstalled: Void = StoreFaults.install(faultHandler)

    /// Runs in a signal handler: `write` and `_exit` only, no allocation.
    private static let faultHandler: StoreFaults.Handler = { kind, path, detail in
        func put(_ s: StaticString) { _ = write(2, s.utf8Start, s.utf8CodeUnitCount) }
        // The C strings the store hands over (a name of their own: a String literal must
        // never be bridged to a temporary C string here).
        func putC(_ c: UnsafePointer<CChar>?) { if let c { _ = write(2, c, strlen(c)) } }
        if kind == StoreFault.damagedPage.rawValue {
            put("pushtrail: store ")
            putC(path)
            put(" is damaged (LMDB: ")
            if detail != nil { putC(detail) } else { put("an internal check failed") }
            put("): nothing was written; run pushtrail verify, and restore the store from a copy\n")
        } else {
            put("pushtrail: cannot write store ")
            putC(path)
            put(": a page of its file could not be stored (no space left on the device, or the file was cut short); ")
            put("what was committed before is intact: free space and run the same command again ")
            put("(duplicates are skipped)\n")
        }
        _exit(ExitStatus.ioError)
    }
}
