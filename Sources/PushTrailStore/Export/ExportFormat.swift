import PushTrailModel

/// The files a stored notification is written as to reproduce it (`export`, and the
/// server's downloads): `.apns` for the iOS Simulator; for Android, the FCM send body
/// or an `adb` script.
public enum ExportFormat: String, CaseIterable, Sendable {
    case apns, fcm, adb

    /// The platform whose notifications the format reproduces.
    public var platform: Platform { self == .apns ? .ios : .android }

    /// The format a notification of `platform` gets when none is asked for.
    public static func standard(for platform: Platform) -> ExportFormat { platform == .ios ? .apns : .fcm }

    /// The default file name.
    public func fileName(stem: String, seq: UInt64, prefix: String = "") -> String {
        switch self {
        case .apns: SafeFileName.apns(stem: stem, seq: seq, prefix: prefix)
        case .fcm: SafeFileName.fcm(stem: stem, seq: seq, prefix: prefix)
        case .adb: SafeFileName.adb(stem: stem, seq: seq, prefix: prefix)
        }
    }

    /// What a single notification's default file name starts with: its thread, else its
    /// task, else `notification`.
    public static func stem(of event: Event) -> String {
        event.threadID ?? event.taskID.map { "task-\($0)" } ?? "notification"
    }
}

extension AndroidBroadcast {
    /// The `sh` script that broadcasts `loaded` (an Android notification) to an
    /// emulator with `adb`: a comment naming it and what the broadcast needs, then the
    /// command.
    public func scriptFile(_ loaded: LoadedEvent, serial: String?) -> [UInt8] {
        let thread = loaded.event.threadID.map { ", thread \(MessageText.oneLine($0))" } ?? ""
        var out = "#!/bin/sh\n"
        out +=
            "# pushtrail export: notification \(MessageText.oneLine(loaded.event.id)) (seq \(loaded.seq)\(thread)) "
            + "for an Android emulator, as FCM delivers it\n"
        for line in AndroidBroadcast.requirements { out += "# \(line)\n" }
        out += script(serial: serial, seq: loaded.seq)
        return Array(out.utf8)
    }
}
