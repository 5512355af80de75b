// The failure conventions of every command — sysexits codes, one-sentence failures
// (`CLIFailure`), file errors as sentences (`FileAccess`), text made safe for a terminal —
// come from the `Sysexits` module `healthgate-bench` shares, visible in every file of the tool;
// which code each module's failure exits with comes from `ModuleExitCodes`.
@_exported import Sysexits
import ModuleExitCodes
