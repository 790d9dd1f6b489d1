// A second test DUT for the bench's serial-line UART (CONTRACT.md, uart_txd /
// uart_rxd, 8N1 at BIT cycles per bit): it receives bytes on uart_rxd and
// sends each back on uart_txd, like the echo of JOP's serial-boot loader.
module jopcal_serial_echo #(parameter BIT = 16) (
    input  wire clk,
    input  wire reset,
    output reg  uart_txd,
    input  wire uart_rxd
);
    // Receiver: wait for the start bit, sample mid-bit.
    reg [15:0] rx_cnt;
    reg [3:0]  rx_bit;
    reg        rx_busy;
    reg [7:0]  rx_shift;
    // Transmitter: start bit, 8 data bits LSB first, stop bit.
    reg [15:0] tx_cnt;
    reg [3:0]  tx_bit;
    reg        tx_busy;
    reg [9:0]  tx_frame;
    reg        have;
    reg [7:0]  pending;

    always @(posedge clk) begin
        if (reset) begin
            uart_txd <= 1;
            rx_busy <= 0;
            tx_busy <= 0;
            have <= 0;
        end else begin
            if (!rx_busy) begin
                if (!uart_rxd) begin
                    rx_busy <= 1;
                    rx_cnt <= BIT / 2;
                    rx_bit <= 0;
                end
            end else if (rx_cnt == 0) begin
                rx_cnt <= BIT - 1;
                if (rx_bit == 0) begin
                    if (uart_rxd) rx_busy <= 0;  // a glitch, not a start bit
                    rx_bit <= 1;
                end else if (rx_bit <= 8) begin
                    rx_shift <= {uart_rxd, rx_shift[7:1]};
                    rx_bit <= rx_bit + 1;
                end else begin
                    rx_busy <= 0;
                    pending <= rx_shift;
                    have <= 1;
                end
            end else
                rx_cnt <= rx_cnt - 1;

            if (!tx_busy) begin
                if (have) begin
                    have <= 0;
                    tx_busy <= 1;
                    tx_frame <= {1'b1, pending, 1'b0};
                    tx_bit <= 0;
                    tx_cnt <= BIT - 1;
                    uart_txd <= 0;
                end
            end else if (tx_cnt == 0) begin
                tx_cnt <= BIT - 1;
                if (tx_bit == 9) begin
                    tx_busy <= 0;
                    uart_txd <= 1;
                end else begin
                    tx_bit <= tx_bit + 1;
                    uart_txd <= tx_frame[tx_bit + 1];
                end
            end else
                tx_cnt <= tx_cnt - 1;
        end
    end
endmodule
