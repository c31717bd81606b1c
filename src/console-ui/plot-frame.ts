// The frame the console's line plots share (weights, units and decisions over time): one size,
// one padding for the axis labels, and the series colours (style.css's .s0-.s5 and .c0-.c5).
export const WIDTH = 600;
export const HEIGHT = 160;
export const PAD = { left: 44, right: 12, top: 10, bottom: 24 } as const;
export const COLOURS = 6;
