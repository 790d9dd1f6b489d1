-- jopcal's synthesizable stand-in for the stack RAM (entity `ram`, the ports
-- JOP's stack stage instantiates), initialized from mem_ram.dat (the
-- microcode's constants and variables, as the tree's assembler writes them).
-- The write address and enable are delayed one rising edge and the write
-- happens on the falling edge, as in the vendor RAM on the inverted clock;
-- the read address is registered on the rising edge and read asynchronously,
-- so a word written in the first half of a cycle is read back in the next.
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.jopcal_dat.all;

entity ram is
generic (width : integer := 32; addr_width : integer := 8);
port (
    reset     : in std_logic;
    data      : in std_logic_vector(width-1 downto 0);
    wraddress : in std_logic_vector(addr_width-1 downto 0);
    rdaddress : in std_logic_vector(addr_width-1 downto 0);
    wren      : in std_logic;
    clock     : in std_logic;
    q         : out std_logic_vector(width-1 downto 0)
);
end ram;

architecture jopcal of ram is
    signal contents : words(0 to 2**addr_width-1)(width-1 downto 0) := read_dat("mem_ram.dat", 2**addr_width, width);
    signal wraddr_dly, rdreg : std_logic_vector(addr_width-1 downto 0);
    signal wren_dly : std_logic;
begin
    process(clock) begin
        if rising_edge(clock) then
            wraddr_dly <= wraddress;
            wren_dly <= wren;
            rdreg <= rdaddress;
        end if;
    end process;
    process(clock) begin
        if falling_edge(clock) then
            if wren_dly = '1' then
                contents(to_integer(unsigned(wraddr_dly))) <= data;
            end if;
        end if;
    end process;
    q <= contents(to_integer(unsigned(rdreg)));
end jopcal;
