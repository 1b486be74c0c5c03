import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A stand-in for `adb` in a directory of its own, to put first on PATH. Each call
/// records the time it started, its arguments as given, and the arguments the device
/// would run: like `adb shell`, it joins the words after `shell` with spaces and has a
/// shell parse the result (`sh -c`, as the device's shell does), here with `printf` in
/// place of `am`, so each word arrives exactly as the device would see it. With
/// `failOnCall`, that call exits 255 with two lines on stderr. With `sleep`, a stand-in
/// `sleep` records its argument and returns at once.
final class ADBStandIn: @unchecked Sendable {
    let dir: TempDir
    var bin: String { dir.file("bin") }
    var log: String { dir.file("log") }
    /// PATH with the stand-ins first (the scripts need sh, date and printf).
    var path: String { bin + ":/usr/bin:/bin" }

    init(failOnCall: Int? = nil, sleep: Bool = false) throws {
        dir = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.file("bin"), withIntermediateDirectories: false)
        try FileManager.default.createDirectory(atPath: dir.file("log"), withIntermediateDirectories: false)
        var adb = """
            #!/bin/sh
            log='\(log)'
            n=$(( $(cat "$log/count" 2>/dev/null || echo 0) + 1 ))
            echo "$n" > "$log/count"
            date +%s%N > "$log/$n.time"
            printf '%s\\000' "$@" > "$log/$n.argv"

            """
        if let failOnCall {
            adb += """
                if [ "$n" -eq \(failOnCall) ]; then
                    echo "Security exception: Permission Denial: not allowed to send broadcast" >&2
                    echo "second line of the error" >&2
                    exit 255
                fi

                """
        }
        adb += """
            while [ "$#" -gt 0 ] && [ "$1" != shell ]; do shift; done
            shift
            command="$*"
            /bin/sh -c "printf '%s\\\\000' $command" > "$log/$n.device"
            echo "Broadcasting: Intent { act=com.google.android.c2dm.intent.RECEIVE }"

            """
        try install("adb", adb)
        if sleep { try install("sleep", "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '\(log)/sleeps'\n") }
    }

    private func install(_ name: String, _ script: String) throws {
        let p = try dir.write("bin/" + name, bytes: Array(script.utf8))
        chmod(p, 0o755)
    }

    struct Call {
        /// The arguments adb got.
        var arguments: [[UInt8]]
        /// The words the device's shell made of the command after `shell`.
        var device: [[UInt8]]
        var startNanoseconds: Int64

        var argumentStrings: [String] { arguments.map { String(decoding: $0, as: UTF8.self) } }
        var deviceStrings: [String] { device.map { String(decoding: $0, as: UTF8.self) } }

        /// The `--es` extras the device got, in order, as bytes.
        var extras: [(key: [UInt8], value: [UInt8])] {
            var out: [(key: [UInt8], value: [UInt8])] = []
            var i = head.count
            while i + 2 < device.count, device[i] == Array("--es".utf8) {
                out.append((device[i + 1], device[i + 2]))
                i += 3
            }
            return out
        }

        /// The words before the first `--es`: `am broadcast -n … -a …`.
        var head: [String] { Array(deviceStrings.prefix { $0 != "--es" }) }

        /// The value of extra `key`, when there is one.
        func extra(_ key: String) -> String? {
            extras.last { $0.key == Array(key.utf8) }.map { String(decoding: $0.value, as: UTF8.self) }
        }
    }

    /// The calls, in the order they were made.
    func calls() throws -> [Call] {
        guard let count = try? String(contentsOfFile: log + "/count", encoding: .utf8) else { return [] }
        return try (1...Int(count.trimmingCharacters(in: .whitespacesAndNewlines))!).map { n in
            let time = try String(contentsOfFile: "\(log)/\(n).time", encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines)
            return Call(
                arguments: ADBStandIn.split(FileManager.default.contents(atPath: "\(log)/\(n).argv")),
                device: ADBStandIn.split(FileManager.default.contents(atPath: "\(log)/\(n).device")),
                startNanoseconds: try #require(Int64(time), "date +%s%N gave \(time)"))
        }
    }

    /// NUL-terminated words.
    static func split(_ data: Data?) -> [[UInt8]] {
        guard let data else { return [] }
        return Array(data).split(separator: 0, omittingEmptySubsequences: false).dropLast().map(Array.init)
    }

    /// The arguments `sleep` was called with.
    func sleeps() throws -> [String] {
        guard let text = try? String(contentsOfFile: log + "/sleeps", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// Runs `script` with /bin/sh and this PATH; returns its status and stderr.
    func sh(_ script: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script]
        process.environment = ["PATH": path]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// What the Firebase receiver must get for a message: `am broadcast -n
/// PACKAGE/RECEIVER -a RECEIVE`, the data map as `--es` extras in order, then a
/// `google.message_id` and `from`.
enum Broadcast {
    static let receiver = "com.google.firebase.iid.FirebaseInstanceIdReceiver"
    static let action = "com.google.android.c2dm.intent.RECEIVE"

    static func head(package: String) -> [String] {
        ["am", "broadcast", "-n", package + "/" + receiver, "-a", action]
    }

    /// The data map of an FCM message (`android.data`, else `data`) as key and value
    /// bytes, in order; nil when a value is not a string.
    static func dataMap(_ message: JSON) -> [(key: [UInt8], value: [UInt8])]? {
        guard case .object(let members)? = message["android"]?["data"] ?? message["data"] else { return [] }
        var out: [(key: [UInt8], value: [UInt8])] = []
        for (key, value) in members {
            guard let s = value.string else { return nil }
            out.append((Array(key.utf8), Array(s.utf8)))
        }
        return out
    }

    /// Whether `call` delivered exactly `data`, then a message id of the form
    /// `pushtrail-<seq>-<seconds>-<pid>` and `from`.
    static func delivered(
        _ call: ADBStandIn.Call, package: String, data: [(key: [UInt8], value: [UInt8])], seq: Int, from: String
    ) -> Bool {
        let extras = call.extras
        guard call.head == head(package: package), extras.count == data.count + 2 else { return false }
        for (got, want) in zip(extras, data) where got.key != want.key || got.value != want.value { return false }
        guard extras[data.count].key == Array("google.message_id".utf8),
            isMessageID(String(decoding: extras[data.count].value, as: UTF8.self), seq: seq)
        else { return false }
        return extras[data.count + 1].key == Array("from".utf8) && extras[data.count + 1].value == Array(from.utf8)
            && call.device.count == 6 + 3 * extras.count
    }

    /// `pushtrail-<seq>-<digits>-<digits>`.
    static func isMessageID(_ id: String, seq: Int) -> Bool {
        let parts = id.split(separator: "-", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "pushtrail" && parts[1] == "\(seq)"
            && parts[2...].allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }
}
