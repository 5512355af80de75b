import ArgumentParser

/// `healthgate decode`: decode one raw item (a serial pedometer line, a BLE payload) offline.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one raw payload or line the way the gateway would, without a device.",
        subcommands: [
            DecodePedometerCommand.self,
        ])
}
