-- jopcal's synthesizable stand-in for the microcode ROM (entity `rom`, the
-- ports JOP's fetch stage instantiates). The contents are read from
-- mem_rom.dat (one signed decimal word per line, as the tree's microcode
-- assembler writes it) while GHDL elaborates, so the synthesized netlist
-- carries them as the ROM's initial value. The address is registered on the
-- rising edge and the word read asynchronously: the output changes once per
-- cycle, one cycle after the address, as with the vendor ROMs.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.jopcal_dat.all;

entity rom is
generic (width : integer; addr_width : integer);
port (
    clk     : in std_logic;
    address : in std_logic_vector(addr_width-1 downto 0);
    q       : out std_logic_vector(width-1 downto 0)
);
end rom;

architecture jopcal of rom is
    -- A signal with an initial value and no driver: GHDL finds a ROM in it
    -- (a generated 2048-way case statement instead becomes a mux tree that
    -- Verilator turns into tens of megabytes of C++).
    signal contents : words(0 to 2**addr_width-1)(width-1 downto 0) := read_dat("mem_rom.dat", 2**addr_width, width);
    signal areg : std_logic_vector(addr_width-1 downto 0);
begin
    process(clk) begin
        if rising_edge(clk) then
            areg <= address;
        end if;
    end process;
    q <= contents(to_integer(unsigned(areg)));
end jopcal;
