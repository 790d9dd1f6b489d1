-- jopcal's synthesizable stand-in for the bytecode (method) cache memory
-- (entity `jbc`, the ports JOP's bytecode fetch instantiates): 32-bit words
-- written on the rising edge, read one byte at a time through a registered
-- byte address, as the vendor dual-port RAMs do.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity jbc is
generic (jpc_width : integer);
port (
    clk     : in std_logic;
    data    : in std_logic_vector(31 downto 0);
    rd_addr : in std_logic_vector(jpc_width-1 downto 0);
    wr_addr : in std_logic_vector(jpc_width-3 downto 0);
    wr_en   : in std_logic;
    q       : out std_logic_vector(7 downto 0)
);
end jbc;

architecture jopcal of jbc is
    type words is array(0 to 2**(jpc_width-2)-1) of std_logic_vector(31 downto 0);
    signal contents : words;
    signal rdreg : std_logic_vector(jpc_width-1 downto 0);
    signal word : std_logic_vector(31 downto 0);
begin
    process(clk) begin
        if rising_edge(clk) then
            rdreg <= rd_addr;
            if wr_en = '1' then
                contents(to_integer(unsigned(wr_addr))) <= data;
            end if;
        end if;
    end process;
    word <= contents(to_integer(unsigned(rdreg(jpc_width-1 downto 2))));
    with rdreg(1 downto 0) select q <=
        word(31 downto 24) when "11",
        word(23 downto 16) when "10",
        word(15 downto 8) when "01",
        word(7 downto 0) when others;
end jopcal;
