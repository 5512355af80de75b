import GATT
import Testing

/// The ATT PDU codec against the byte script of heart-rate-profile.md §6 and edge cases.
@Suite struct ATTPDUCodecTests {
    static func bytes(_ hex: String) -> [UInt8] {
        let h = hex.filter { !$0.isWhitespace }
        return stride(from: 0, to: h.count, by: 2).map {
            let i = h.index(h.startIndex, offsetBy: $0)
            return UInt8(h[i...h.index(after: i)], radix: 16)!
        }
    }

    /// Every PDU of the §6 script decodes to the value it describes and encodes back to the same bytes.
    @Test(arguments: [
        ("02 f700", ATTPDU.exchangeMTURequest(clientRxMTU: 247)),
        ("03 1700", .exchangeMTUResponse(serverRxMTU: 23)),
        ("10 0100 ffff 0028", .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService)),
        ("11 06 0c00 1100 0d18", .readByGroupTypeResponse([ATTGroupValue(handle: 0x0C, endGroupHandle: 0x11, value: [0x0D, 0x18])])),
        ("10 1200 ffff 0028", .readByGroupTypeRequest(start: 0x12, end: 0xFFFF, type: .primaryService)),
        ("01 10 1200 0a", .errorResponse(request: .readByGroupTypeRequest, handle: 0x12, error: .attributeNotFound)),
        ("08 0c00 1100 0328", .readByTypeRequest(start: 0x0C, end: 0x11, type: .characteristic)),
        ("09 07 0d00 10 0e00 372a", .readByTypeResponse([ATTHandleValue(handle: 0x0D, value: [0x10, 0x0E, 0x00, 0x37, 0x2A])])),
        ("04 0f00 0f00", .findInformationRequest(start: 0x0F, end: 0x0F)),
        ("05 01 0f00 0229", .findInformationResponse([ATTHandleUUID(handle: 0x0F, uuid: .clientCharacteristicConfiguration)])),
        ("12 0f00 0100", .writeRequest(handle: 0x0F, value: [0x01, 0x00])),
        ("13", .writeResponse),
        ("1b 0e00 164d1603", .handleValueNotification(handle: 0x0E, value: [0x16, 0x4D, 0x16, 0x03])),
        ("1d 0e00 01", .handleValueIndication(handle: 0x0E, value: [0x01])),
        ("1e", .handleValueConfirmation),
        ("0a 2600", .readRequest(handle: 0x26)),
        ("0b 57", .readResponse([0x57])),
        ("0c 1600 1600", .readBlobRequest(handle: 0x16, offset: 0x16)),
        ("52 1000 01", .writeCommand(handle: 0x10, value: [0x01])),
    ])
    func scriptRoundTrip(hex: String, pdu: ATTPDU) throws {
        let wire = Self.bytes(hex)
        #expect(try ATTPDU(decoding: wire) == pdu)
        #expect(pdu.encode() == wire)
    }

    @Test func uuid128EntriesRoundTrip() throws {
        let vendor = BluetoothUUID("6217FF4B-FB31-1140-AD5A-A45545D7ECF3")!
        let rsp = ATTPDU.readByGroupTypeResponse([ATTGroupValue(handle: 0x27, endGroupHandle: 0x2A, value: vendor.attBytes)])
        let wire = rsp.encode()
        #expect(wire[1] == 20)
        #expect(try ATTPDU(decoding: wire) == rsp)
        #expect(vendor.description == "6217FF4B-FB31-1140-AD5A-A45545D7ECF3")
        #expect(BluetoothUUID(attBytes: vendor.attBytes) == vendor)
        #expect(BluetoothUUID("0000180d-0000-1000-8000-00805f9b34fb") == BluetoothUUID(0x180D))
        #expect(BluetoothUUID(0x2A37).description == "2A37")
    }

    @Test(arguments: [
        ("", "no opcode"),
        ("01 10 12", "needs 4"),
        ("11 06 0c00 1100 0d", "does not divide"),
        ("09 01 0d00", "does not divide"),
        ("05 03 0f00 0229", "unknown format"),
        ("05 01 0f00 02", "whole number"),
        ("0a 26", "needs 2"),
        ("1b 0e", "needs 2"),
    ])
    func malformedIsRejectedWithReason(hex: String, reason: String) {
        #expect {
            _ = try ATTPDU(decoding: Self.bytes(hex))
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func errorCodesAreNamed() {
        #expect(ATTErrorCode.attributeNotFound.description == "Attribute Not Found (0x0A)")
        #expect(ATTErrorCode(0x80).description == "Application Error (0x80)")
        #expect(ATTErrorCode.insufficientEncryption.needsSecurity)
        #expect(ATTOpcode.writeCommand.isCommand && !ATTOpcode.writeRequest.isCommand)
    }
}
