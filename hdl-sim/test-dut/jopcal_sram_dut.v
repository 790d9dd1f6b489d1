// jopcal's test DUT for the contract's SRAM memory style: the project's test
// DUT (jopcal_test_dut.v) behind a memory controller of its own, in the manner
// of JOP's SimpCon SRAM controllers: the controller drives the pins of an
// asynchronous SRAM (address, data out, chip select, output enable, write
// enable, all registered) and its parameters set the wait states; the bench
// models only the chip. Build with both files:
//   jopcal sim build --rtl jopcal_sram_dut.v jopcal_test_dut.v --top jopcal_sram_dut
module jopcal_sram_ctrl #(
    parameter RD_WAIT = 2,  // cycles the chip is read before the data is taken
    parameter WR_WAIT = 3   // cycles write enable is held low
) (
    input  wire        clk,
    input  wire        reset,
    input  wire [19:0] addr,
    input  wire        rd,
    input  wire        wr,
    input  wire [31:0] wdata,
    output reg  [31:0] rdata,
    output reg         ready,
    output reg  [19:0] sram_addr,
    output reg  [31:0] sram_dout,
    input  wire [31:0] sram_din,
    output reg         sram_ncs,
    output reg         sram_noe,
    output reg         sram_nwe
);
    localparam IDLE = 2'd0, READ = 2'd1, WRITE = 2'd2;
    reg [1:0] state;
    reg [7:0] count;
    always @(posedge clk) begin
        ready <= 1'b0;
        if (reset) begin
            state <= IDLE;
            sram_ncs <= 1'b1;
            sram_noe <= 1'b1;
            sram_nwe <= 1'b1;
        end else case (state)
            IDLE: if (rd || wr) begin
                sram_addr <= addr;
                sram_dout <= wdata;
                sram_ncs <= 1'b0;
                sram_noe <= !rd;
                sram_nwe <= !wr;
                count <= rd ? RD_WAIT[7:0] : WR_WAIT[7:0];
                state <= rd ? READ : WRITE;
            end
            READ: if (count == 0) begin
                rdata <= sram_din;
                ready <= 1'b1;
                sram_ncs <= 1'b1;
                sram_noe <= 1'b1;
                state <= IDLE;
            end else count <= count - 1;
            default: if (count == 0) begin
                ready <= 1'b1;
                sram_ncs <= 1'b1;
                sram_nwe <= 1'b1;
                state <= IDLE;
            end else count <= count - 1;
        endcase
    end
endmodule

module jopcal_sram_dut (
    input  wire        clk,
    input  wire        reset,
    output wire [19:0] sram_addr,
    output wire [31:0] sram_dout,
    input  wire [31:0] sram_din,
    output wire        sram_ncs,
    output wire        sram_noe,
    output wire        sram_nwe,
    output wire        uart_tx_valid,
    output wire [7:0]  uart_tx_data,
    input  wire        uart_tx_ready,
    input  wire        uart_rx_valid,
    input  wire [7:0]  uart_rx_data,
    output wire        uart_rx_ready,
    output wire [31:0] cycle_count,
    output wire        halt
);
    wire [19:0] mem_addr;
    wire mem_rd, mem_wr, mem_ready;
    wire [31:0] mem_wdata, mem_rdata;
    jopcal_test_dut dut (
        .clk(clk), .reset(reset),
        .mem_addr(mem_addr), .mem_rd(mem_rd), .mem_wr(mem_wr), .mem_wdata(mem_wdata),
        .mem_rdata(mem_rdata), .mem_ready(mem_ready),
        .uart_tx_valid(uart_tx_valid), .uart_tx_data(uart_tx_data), .uart_tx_ready(uart_tx_ready),
        .uart_rx_valid(uart_rx_valid), .uart_rx_data(uart_rx_data), .uart_rx_ready(uart_rx_ready),
        .cycle_count(cycle_count), .halt(halt)
    );
    jopcal_sram_ctrl ctrl (
        .clk(clk), .reset(reset),
        .addr(mem_addr), .rd(mem_rd), .wr(mem_wr), .wdata(mem_wdata), .rdata(mem_rdata), .ready(mem_ready),
        .sram_addr(sram_addr), .sram_dout(sram_dout), .sram_din(sram_din),
        .sram_ncs(sram_ncs), .sram_noe(sram_noe), .sram_nwe(sram_nwe)
    );
endmodule
