// jopcal's test DUT for the Verilator bench. It honours hdl-sim/CONTRACT.md
// with the character-level UART and the memory port, and behaves like a JOP
// board's serial loader (classic protocol): every byte it receives is echoed;
// bytes form 32-bit words, most significant first; each word is written to
// external memory (through the bench's wait states); word 0 is the image
// length. After the last word it reads the whole image back from memory,
// XORs it, and prints
//   @jopcal result bench=dut iter=<words> cycles=<cycles of the read-back> sum=<xor> chk=<line check>
// where cycles counts from the last word's write to the last read: it depends
// only on the image length and the bench's read wait states, so a host can
// check the memory model to the cycle.
//   @jopcal done
// then waits for the next image. All numbers are printed in decimal.
module jopcal_test_dut (
    input  wire        clk,
    input  wire        reset,
    // memory
    output reg  [19:0] mem_addr,
    output reg         mem_rd,
    output reg         mem_wr,
    output reg  [31:0] mem_wdata,
    input  wire [31:0] mem_rdata,
    input  wire        mem_ready,
    // character UART
    output reg         uart_tx_valid,
    output reg  [7:0]  uart_tx_data,
    input  wire        uart_tx_ready,
    input  wire        uart_rx_valid,
    input  wire [7:0]  uart_rx_data,
    output reg         uart_rx_ready,
    // taps
    output reg  [31:0] cycle_count,
    output wire        halt
);
    assign halt = 1'b0;

    localparam S_RX = 0, S_ECHO = 1, S_WRITE = 2, S_WWAIT = 3, S_READ = 4, S_RWAIT = 5,
               S_PRINT = 6, S_PUTC = 7;

    reg [3:0]  state;
    reg [31:0] word;
    reg [1:0]  nbytes;
    reg [31:0] count;      // words received
    reg [31:0] total;      // word 0
    reg [31:0] rd_addr;
    reg [31:0] xsum;
    reg [31:0] done_cycle;
    reg [31:0] read_start;
    reg [7:0]  rx_byte;

    // The printer: a list of fields, each a literal string or a number.
    reg [4:0]  field;      // which part of the output
    reg [4:0]  pos;        // character within a literal
    reg [31:0] num;        // number being printed
    reg        started;    // a nonzero digit was printed
    reg [15:0] line_sum;   // check value of the current line
    reg [7:0]  ch;         // character to send
    reg        checked;    // ch is part of the line's check value (before " chk=")
    reg [3:0]  digit;

    function [31:0] pow10(input [3:0] k);
        case (k)
            0: pow10 = 1; 1: pow10 = 10; 2: pow10 = 100; 3: pow10 = 1000; 4: pow10 = 10000;
            5: pow10 = 100000; 6: pow10 = 1000000; 7: pow10 = 10000000; 8: pow10 = 100000000;
            default: pow10 = 1000000000;
        endcase
    endfunction

    // Literal pieces of the output, addressed by field and position (0 ends a piece).
    function [7:0] lit(input [4:0] f, input [4:0] p);
        reg [8*32-1:0] s;
        begin
            case (f)
                0: s = "@jopcal result bench=dut iter=";
                2: s = " cycles=";
                4: s = " sum=";
                6: s = " chk=";
                8: s = "\n@jopcal done\n";
                default: s = "";
            endcase
            // Verilog strings are right-aligned: character p of a string of length L is byte L-1-p.
            lit = s[8*(litlen(f) - 1 - p) +: 8];
        end
    endfunction

    // Length of each literal, in characters.
    function [4:0] litlen(input [4:0] f);
        case (f)
            0: litlen = 30; 2: litlen = 8; 4: litlen = 5; 6: litlen = 5; 8: litlen = 14;
            default: litlen = 0;
        endcase
    endfunction

    always @(posedge clk) begin
        if (reset) begin
            state <= S_RX;
            cycle_count <= 0;
            mem_rd <= 0;
            mem_wr <= 0;
            uart_tx_valid <= 0;
            uart_rx_ready <= 0;
            nbytes <= 0;
            count <= 0;
            total <= 0;
        end else begin
            cycle_count <= cycle_count + 1;
            mem_rd <= 0;
            mem_wr <= 0;
            uart_rx_ready <= 0;
            case (state)
            S_RX: if (uart_rx_valid && !uart_rx_ready) begin
                uart_rx_ready <= 1;
                rx_byte <= uart_rx_data;
                word <= {word[23:0], uart_rx_data};
                uart_tx_data <= uart_rx_data;
                uart_tx_valid <= 1;
                state <= S_ECHO;
            end
            S_ECHO: if (uart_tx_ready) begin
                uart_tx_valid <= 0;
                nbytes <= nbytes + 1;
                state <= (nbytes == 3) ? S_WRITE : S_RX;
            end
            S_WRITE: begin
                mem_addr <= count[19:0];
                mem_wdata <= word;
                mem_wr <= 1;
                if (count == 0) total <= word;
                state <= S_WWAIT;
            end
            S_WWAIT: if (mem_ready) begin
                count <= count + 1;
                if (count + 1 == ((count == 0) ? word : total)) begin
                    rd_addr <= 0;
                    xsum <= 0;
                    read_start <= cycle_count;
                    state <= S_READ;
                end else
                    state <= S_RX;
            end
            S_READ: begin
                mem_addr <= rd_addr[19:0];
                mem_rd <= 1;
                state <= S_RWAIT;
            end
            S_RWAIT: if (mem_ready) begin
                xsum <= xsum ^ mem_rdata;
                if (rd_addr + 1 == total) begin
                    done_cycle <= cycle_count - read_start;
                    field <= 0;
                    pos <= 0;
                    line_sum <= 0;
                    state <= S_PRINT;
                end else begin
                    rd_addr <= rd_addr + 1;
                    state <= S_READ;
                end
            end
            S_PRINT: begin
                // Even fields are literals, odd ones numbers (iter, cycles, sum, chk).
                if (field[0] == 0) begin
                    if (pos == litlen(field)) begin
                        if (field == 8) begin
                            count <= 0;
                            nbytes <= 0;
                            state <= S_RX;
                        end else begin
                            field <= field + 1;
                            pos <= 0;
                            started <= 0;
                            digit <= 9;
                            case (field)
                                0: num <= total;
                                2: num <= done_cycle;
                                4: num <= xsum;
                                default: num <= {16'd0, line_sum};
                            endcase
                        end
                    end else begin
                        ch <= lit(field, pos);
                        checked <= field < 6;
                        pos <= pos + 1;
                        state <= S_PUTC;
                    end
                end else begin
                    // Decimal digits by repeated subtraction, most significant first.
                    if (num >= pow10(digit)) begin
                        num <= num - pow10(digit);
                        pos <= pos + 1;   // counts this digit's value
                    end else begin
                        if (pos != 0 || started || digit == 0) begin
                            ch <= 8'h30 + {4'd0, pos[3:0]};
                            checked <= field < 6;
                            started <= 1;
                            state <= S_PUTC;
                        end
                        pos <= 0;
                        if (digit == 0) begin
                            field <= field + 1;
                        end else
                            digit <= digit - 1;
                    end
                end
            end
            S_PUTC: begin
                if (!uart_tx_valid) begin
                    uart_tx_data <= ch;
                    uart_tx_valid <= 1;
                    // The check covers the line up to " chk=".
                    if (checked) line_sum <= line_sum + {8'd0, ch};
                end else if (uart_tx_ready) begin
                    uart_tx_valid <= 0;
                    state <= S_PRINT;
                end
            end
            default: state <= S_RX;
            endcase
        end
    end
endmodule
