/// The version of pushtrail, as `--version`, the report's page and the server's pages
/// state it.
public enum PushTrailVersion {
    public static let current = "0.1.0"
}
