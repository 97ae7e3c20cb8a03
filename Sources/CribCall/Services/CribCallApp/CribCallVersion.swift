/// The version of cribcall (shown by `cribcall --version` and in the app's settings).
public enum CribCallVersion {
    public static let current = "0.5.0"
}
