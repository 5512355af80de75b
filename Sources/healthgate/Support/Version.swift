/// HealthGate's version: the one place it is set (`healthgate --version`, the man page).
enum HealthGateVersion {
    /// The release. Raise it when a release is cut; docs/operations.md says how to check it.
    static let release = "0.9.0"
}
