"""capture: bytes arriving from a machine: serial ports and sockets
(serialport), the console watch for READY and dumps (consolewatch), the
network receiver and its signatures (netcapture, siphash), and capture
--export written as a dump's lines arrive (liveexport)."""
